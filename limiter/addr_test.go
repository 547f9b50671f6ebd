package limiter

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestClientIP(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"10.0.0.7:51234", "10.0.0.7"},
		{"10.0.0.7", "10.0.0.7"},
		{"[::1]:80", "::1"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"[fe80::1%eth0]:80", "fe80::1%eth0"},
		{"[::ffff:10.0.0.7]:80", "10.0.0.7"},
		{"[::FFFF:10.0.0.7]:80", "10.0.0.7"},
		{"::ffff:10.0.0.7", "10.0.0.7"},
		{"[::ffff:a00:7]:80", "::ffff:a00:7"},
		{"[::ffff:0:10.0.0.7]:80", "::ffff:0:10.0.0.7"}, // not IPv4-mapped
		{"localhost:8080", "localhost"},
		{"/run/yrpc.sock", "/run/yrpc.sock"},
		{"@abstract", "@abstract"},
		{"[broken", "[broken"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ClientIP(tt.addr); got != tt.want {
			t.Errorf("ClientIP(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestClientIPNetAddr(t *testing.T) {
	for _, a := range []net.Addr{
		&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 9000},
		&net.TCPAddr{IP: net.ParseIP("2001:db8::2"), Port: 9000},
		&net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 53},
	} {
		host, _, err := net.SplitHostPort(a.String())
		if err != nil {
			t.Fatal(err)
		}
		if got := ClientIP(a.String()); got != host {
			t.Errorf("ClientIP(%q) = %q, want %q", a, got, host)
		}
	}
}

func TestClientIPAllocs(t *testing.T) {
	addr := "[2001:db8::1]:443"
	if n := testing.AllocsPerRun(100, func() { _ = ClientIP(addr) }); n != 0 {
		t.Errorf("ClientIP allocates %v times", n)
	}
}

// FuzzClientIP checks that ClientIP never panics, returns a substring of its
// input, and agrees with net.SplitHostPort on addresses it accepts.
func FuzzClientIP(f *testing.F) {
	for _, s := range []string{
		netip.MustParseAddrPort("10.0.0.7:51234").String(),
		netip.MustParseAddrPort("[2001:db8::1]:443").String(),
		netip.AddrPortFrom(netip.MustParseAddr("::ffff:10.0.0.7"), 80).String(),
		net.JoinHostPort("fe80::1%eth0", "80"),
		"::1", "", "[", "]:", "/run/yrpc.sock",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		got := ClientIP(addr)
		if !strings.Contains(addr, got) {
			t.Fatalf("ClientIP(%q) = %q, not a substring", addr, got)
		}
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return
		}
		want := ap.Addr().Unmap().String()
		if ap.Addr().Zone() == "" && !strings.EqualFold(got, want) {
			if a, err := netip.ParseAddr(got); err != nil || a.Unmap() != ap.Addr().Unmap() {
				t.Fatalf("ClientIP(%q) = %q, want %q", addr, got, want)
			}
		}
	})
}

func TestClientKey(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"10.0.0.7:51234", "10.0.0.7"},
		{"[::ffff:10.0.0.7]:80", "10.0.0.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::99]:443", "2001:db8:1:2::/64"},
		{"[2001:db8::1]:80", "2001:db8::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"::1", "::/64"},
		{"localhost:8080", "localhost"},
		{"/run/yrpc.sock", "/run/yrpc.sock"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ClientKey(tt.addr); got != tt.want {
			t.Errorf("ClientKey(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
