package zkctl

import (
	"strings"
	"testing"
)

func TestCommandAt(t *testing.T) {
	for _, tt := range []struct {
		args string
		want int
	}{
		{"ls", 0},
		{"-zk h:1 ls", 2},
		{"--zk h:1 --root /x health a:1", 4},
		{"--root=/x --force drain s a:1", 2},
		{"--json ls", 1},
		{"--zk-tls --dry-run health", 2},
		{"-- health", 1},
		{"--unknown health", 1},
		{"", -1},
		{"-zk", -1},
		{"-zk h:1", -1},
	} {
		if got := CommandAt(strings.Fields(tt.args)); got != tt.want {
			t.Errorf("CommandAt(%q) = %d, want %d", tt.args, got, tt.want)
		}
	}
}
