package names

import (
	"go/token"
	"path"
	"strings"
)

// initialisms are the words that Go style writes in capitals.
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "uri": "URI", "http": "HTTP",
	"https": "HTTPS", "ip": "IP", "tcp": "TCP", "udp": "UDP", "dns": "DNS",
	"api": "API", "json": "JSON", "xml": "XML", "html": "HTML", "uuid": "UUID",
	"uid": "UID", "rpc": "RPC", "sql": "SQL", "tls": "TLS", "ttl": "TTL",
	"cpu": "CPU", "os": "OS", "utf8": "UTF8", "ascii": "ASCII", "eof": "EOF",
}

// GoName turns a schema name ("created_at", "user_id", "avatarURL") into an
// exported Go identifier ("CreatedAt", "UserID", "AvatarURL"). Two schema
// names that map to the same GoName clash in generated code.
func GoName(name string) string {
	var b strings.Builder
	for _, word := range splitWords(name) {
		if up, ok := initialisms[strings.ToLower(word)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(word[:1]))
		b.WriteString(word[1:])
	}
	return b.String()
}

// splitWords splits on '_', '-', '.', ' ' and lower-to-upper case changes.
func splitWords(s string) []string {
	var words []string
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, s[start:end])
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			flush(i)
			start = i + 1
		case i > start && isUpper(c) && !isUpper(s[i-1]):
			flush(i)
			start = i
		}
	}
	flush(len(s))
	return words
}

// Snake turns a Go name into snake_case, the stem of generated and
// scaffolded file names and of protobuf enum value names: "UserRole" ->
// "user_role", "UserID" -> "user_id", "GetURLInfo" -> "get_url_info",
// "HTTPServer" -> "http_server", "UserIDs" -> "user_ids". An initialism
// ends before its last capital when a lower-case word follows ("URLInfo"),
// except for a plural "s" ("IDs").
func Snake(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isUpper(c) {
			if i > 0 && name[i-1] != '_' && (!isUpper(name[i-1]) || startsWord(name, i)) {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// startsWord reports whether the capital at name[i], which follows another
// capital, starts a new word: a lower-case letter follows it that is not
// just the plural "s" of the initialism before.
func startsWord(name string, i int) bool {
	if i+1 >= len(name) || !isLower(name[i+1]) {
		return false
	}
	plural := name[i+1] == 's' && (i+2 == len(name) || !isLower(name[i+2]))
	return !plural
}

// knownOS and knownArch are the GOOS and GOARCH values that go/build
// reads from file names (Go's internal/syslist).
var (
	knownOS = map[string]bool{
		"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true, "hurd": true,
		"illumos": true, "ios": true, "js": true, "linux": true, "nacl": true, "netbsd": true,
		"openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true,
	}
	knownArch = map[string]bool{
		"386": true, "amd64": true, "amd64p32": true, "arm": true, "armbe": true, "arm64": true,
		"arm64be": true, "loong64": true, "mips": true, "mipsle": true, "mips64": true, "mips64le": true,
		"mips64p32": true, "mips64p32le": true, "ppc": true, "ppc64": true, "ppc64le": true,
		"riscv": true, "riscv64": true, "s390": true, "s390x": true, "sparc": true, "sparc64": true, "wasm": true,
	}
)

// FileStem returns stem, the part before the first dot of a Go file name
// made from a schema name, or stem+"_"+word when the go command would not
// build that file everywhere: when stem ends in "_" and a GOOS or GOARCH
// ("agent_windows" builds only on Windows, so it becomes
// "agent_windows_message"), possibly followed by "_test", or in "_test"
// (stem+".go" is a test file).
func FileStem(stem, word string) string {
	i := strings.LastIndexByte(stem, '_')
	if i < 0 {
		return stem
	}
	if last := stem[i+1:]; last == "test" || knownOS[last] || knownArch[last] {
		return stem + "_" + word
	}
	return stem
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// PackageName turns s (a directory or import path element) into a Go
// package name: its ASCII letters, lower-cased, and digits, without
// leading digits ("shop-main" -> "shopmain", "2fa" -> "fa"). It returns ""
// when nothing is left.
func PackageName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isLower(c), isDigit(c) && len(b) > 0:
			b = append(b, c)
		case isUpper(c):
			b = append(b, c+'a'-'A')
		}
	}
	return string(b)
}

// DefaultPackage returns the protobuf package (the method-ID namespace) of
// a schema package with import path schemaPath that declares none: the
// ImportName of the import path above the schema package
// ("example.com/shop/schema" -> "shop", "example.com/shop/v2/schema" ->
// "shop"); a one-element path names itself. The result depends only on the
// import path, never on the directory the module is checked out in. It
// returns "" when no letter is left.
func DefaultPackage(schemaPath string) string {
	schemaPath = strings.Trim(schemaPath, "/")
	if parent := path.Dir(schemaPath); parent != "." {
		schemaPath = parent
	}
	return ImportName(schemaPath)
}

// ImportName returns the Go package name that an import path suggests: its
// last element, made a PackageName, skipping a major-version element as Go
// does ("example.com/shop" and "example.com/shop/v2" -> "shop",
// "example.com/shop-main" -> "shopmain"). It returns "" when no letter is
// left.
func ImportName(importPath string) string {
	elems := strings.Split(strings.Trim(importPath, "/"), "/")
	for len(elems) > 1 && isMajorVersion(elems[len(elems)-1]) {
		elems = elems[:len(elems)-1]
	}
	return PackageName(elems[len(elems)-1])
}

// isMajorVersion reports whether elem is a module's major-version suffix:
// "v2", "v3", ... (Go modules have no "v0" or "v1" suffix).
func isMajorVersion(elem string) bool {
	if len(elem) < 2 || elem[0] != 'v' || elem[1] == '0' || elem == "v1" {
		return false
	}
	for i := 1; i < len(elem); i++ {
		if !isDigit(elem[i]) {
			return false
		}
	}
	return true
}

// IsIdent reports whether s is a schema name that is an identifier in both
// Go and protobuf: an ASCII letter, then ASCII letters, digits and
// underscores. Field, enum value, message, service and method names must be
// one.
func IsIdent(s string) bool {
	if s == "" || !isLower(s[0]) && !isUpper(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// IsExported reports whether s is an IsIdent that starts with a capital, as
// message, service, method and enum type names must.
func IsExported(s string) bool { return IsIdent(s) && isUpper(s[0]) }

// IsGoIdent reports whether s is a Go identifier that is not a keyword, as
// a Go package name must be.
func IsGoIdent(s string) bool { return token.IsIdentifier(s) }

// IsProtoPackage reports whether s is a protobuf package name: IsIdent
// names separated by single dots ("shop", "acme.shop.v1").
func IsProtoPackage(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !IsIdent(part) {
			return false
		}
	}
	return true
}

// MapEntry returns the name of the message that protobuf declares for the
// entries of a map field, as protoc makes it: the field name with its
// first letter and each letter after an underscore capitalized and the
// underscores dropped, plus "Entry" ("labels" -> "LabelsEntry", "by_name"
// -> "ByNameEntry").
func MapEntry(field string) string { return camel(field, true) + "Entry" }

// JSONName returns the JSON name that protoc gives a field: each letter
// after an underscore capitalized, the underscores dropped ("created_at"
// -> "createdAt", "a_b_c" -> "aBC").
func JSONName(field string) string { return camel(field, false) }

// camel drops the underscores of s and capitalizes the letter after each
// one, and the first letter when up is set, as protoc does for map entry
// and JSON names.
func camel(s string, up bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_':
			up = true
		case up && isLower(c):
			b = append(b, c-'a'+'A')
			up = false
		default:
			b = append(b, c)
			up = false
		}
	}
	return string(b)
}

// ProtoEnumValue returns the protobuf name of value v of enum e: prefixed
// with the enum's name, as protobuf style asks, since enum values share
// their package's scope (UserRole's "admin" -> "USER_ROLE_ADMIN").
func ProtoEnumValue(e, v string) string {
	return strings.ToUpper(Snake(e)) + "_" + strings.ToUpper(Snake(v))
}

// ProtoFile returns the name of the .proto file of protobuf package pkg
// ("users" -> "users.proto", "acme.shop.v1" -> "acme.shop.v1.proto"):
// the name under which generated code embeds the package's
// FileDescriptorProto, and the file that yrpcc proto's output must be
// saved as for protoc to give the same descriptor.
func ProtoFile(pkg string) string { return pkg + ".proto" }
