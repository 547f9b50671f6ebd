package rt

import (
	"context"
	"strings"
	"testing"
)

// FuzzTokenCheck: a call passes the registry-token check exactly when the
// first yrpc-token value of its metadata is the server's token (any call
// does on a server without one), and BearerTokens admits exactly
// "authorization: Bearer TOKEN" for a configured, non-empty TOKEN, as its
// principal. Its errors are constant: they never show what was sent.
func FuzzTokenCheck(f *testing.F) {
	f.Add("0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef", "Bearer s3cret")
	f.Add("tok", "", "")
	f.Add("tok", "tok\x00", "Bearer ")
	f.Add("", "anything", "bearer s3cret")
	f.Add("", "", "Bearer ")
	f.Add("tok", "TOK", "Bearer s3cret ")
	f.Fuzz(func(t *testing.T, token, sent, authz string) {
		s := &Server{token: token}
		if got, want := s.tokenOK(MD{MDToken, sent}), token == "" || sent == token; got != want {
			t.Fatalf("server token %q, call token %q: tokenOK = %v, want %v", token, sent, got, want)
		}
		if got := s.tokenOK(MD{MDToken + "x", token, "k", "v"}); got != (token == "") {
			t.Fatalf("server token %q, no call token: tokenOK = %v", token, got)
		}
		tokens := map[string]string{"s3cret": "alice", token: "bob"}
		principal, err := BearerTokens(tokens).Authenticate(context.Background(), AuthRequest{MD: MD{MDAuthorization, authz}})
		v, bearer := strings.CutPrefix(authz, "Bearer ")
		want := ""
		if bearer && v != "" {
			want = tokens[v]
		}
		if principal != want || (err == nil) != (want != "") {
			t.Fatalf("tokens %q, %q: Authenticate = %q, %v; want %q", tokens, authz, principal, err, want)
		}
		if err != nil && err.Error() != "no bearer token" && err.Error() != "bad bearer token" {
			t.Fatalf("the error may show what was sent: %v", err) // it is returned to the caller and logged
		}
	})
}
