package load

import "github.com/yrpc/yrpc/gen"

func validKind(k gen.Kind) bool {
	switch k {
	case gen.KindBool, gen.KindString, gen.KindBytes, gen.KindEnum, gen.KindTime,
		gen.KindDuration, gen.KindMessage:
		return true
	}
	return numericKind(k)
}

func numericKind(k gen.Kind) bool {
	switch k {
	case gen.KindInt32, gen.KindInt64, gen.KindUint32, gen.KindUint64, gen.KindSint32,
		gen.KindSint64, gen.KindFixed32, gen.KindFixed64, gen.KindSfixed32,
		gen.KindSfixed64, gen.KindFloat32, gen.KindFloat64:
		return true
	}
	return false
}

func packable(k gen.Kind) bool { return numericKind(k) || k == gen.KindBool || k == gen.KindEnum }

func mapKeyKind(k gen.Kind) bool {
	return k != gen.KindFloat32 && k != gen.KindFloat64 && (numericKind(k) || k == gen.KindBool || k == gen.KindString)
}

// knownCode reports whether s names an rt.Code other than OK (gRPC's
// status code names).
func knownCode(s string) bool {
	switch s {
	case "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
		"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
		"Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable",
		"DataLoss", "Unauthenticated":
		return true
	}
	return false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && (c == '_' || '0' <= c && c <= '9'):
		default:
			return false
		}
	}
	return true
}

func isExported(s string) bool { return isIdent(s) && 'A' <= s[0] && s[0] <= 'Z' }

// isProtoPackage reports whether s is dot-separated identifiers.
func isProtoPackage(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isIdent(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// goPackageName turns a directory name into a Go package name: lower case
// letters and digits only, not starting with a digit.
func goPackageName(dir string) string {
	b := make([]byte, 0, len(dir))
	for i := 0; i < len(dir); i++ {
		c := dir[i]
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' && len(b) > 0:
			b = append(b, c)
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	return string(b)
}
