package gen

import "strings"

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

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
