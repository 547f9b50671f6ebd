package gen

import "testing"

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"name":        "Name",
		"created_at":  "CreatedAt",
		"user_id":     "UserID",
		"UserID":      "UserID",
		"avatarURL":   "AvatarURL",
		"field129":    "Field129",
		"http_server": "HTTPServer",
		"ids":         "IDs",
	} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}
