package names_test

import (
	"testing"

	"github.com/yrpc/yrpc/gen/names"
)

func TestGoName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"name", "Name"},
		{"created_at", "CreatedAt"},
		{"user_id", "UserID"},
		{"UserID", "UserID"},
		{"avatarURL", "AvatarURL"},
		{"field129", "Field129"},
		{"http_server", "HTTPServer"},
		{"ids", "IDs"},
		{"get_url_info", "GetURLInfo"},
	} {
		if got := names.GoName(tc.in); got != tc.want {
			t.Errorf("GoName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSnake pins one answer per name: the generator's file names, init's
// scaffold file names and the .proto enum value names all come from Snake.
func TestSnake(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"User", "user"},
		{"UserRole", "user_role"},
		{"GetUser", "get_user"},
		{"UserID", "user_id"},
		{"UserIDs", "user_ids"},
		{"GetURLInfo", "get_url_info"},
		{"HTTPServer", "http_server"},
		{"MyHTTPSServer", "my_https_server"},
		{"URLsByID", "urls_by_id"},
		{"A", "a"},
		{"ABC", "abc"},
		{"V2Api", "v2_api"},
		{"Field2Name", "field2_name"},
		{"Foo_Bar", "foo_bar"},
		{"member", "member"},
		{"inStock", "in_stock"},
		{"KitchenService", "kitchen_service"},
	} {
		if got := names.Snake(tc.in); got != tc.want {
			t.Errorf("Snake(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPackageName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"shop", "shop"},
		{"shop-main", "shopmain"},
		{"Shop_Main", "shopmain"},
		{"2fa", "fa"},
		{"v2", "v2"},
		{"---", ""},
		{"", ""},
	} {
		if got := names.PackageName(tc.in); got != tc.want {
			t.Errorf("PackageName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDefaultPackage checks that the protobuf package comes from the import
// path alone: a module checked out in a directory named shop-main still
// gets "shop" from its module path.
func TestDefaultPackage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com/shop/schema", "shop"},
		{"github.com/yrpc/yrpc/examples/users/schema", "users"},
		{"example.com/shop/v2/schema", "shop"},
		{"example.com/shop-api/schema", "shopapi"},
		{"example.com/shop/api", "shop"},
		{"shop", "shop"},
		{"shop/schema", "shop"},
		{"example.com/v2/schema", "examplecom"},
		{"", ""},
	} {
		if got := names.DefaultPackage(tc.in); got != tc.want {
			t.Errorf("DefaultPackage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestImportName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com/shop", "shop"},
		{"example.com/shop/v2", "shop"},
		{"example.com/shop/v10", "shop"},
		{"example.com/api/v1", "v1"},
		{"example.com/api/v0", "v0"},
		{"example.com/shop-main", "shopmain"},
		{"example.com/shop/shoprpc", "shoprpc"},
		{"v2", "v2"},
		{"", ""},
	} {
		if got := names.ImportName(tc.in); got != tc.want {
			t.Errorf("ImportName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIdents(t *testing.T) {
	for _, tc := range []struct {
		in                       string
		ident, exported, goIdent bool
	}{
		{"created_at", true, false, true},
		{"User", true, true, true},
		{"User2_x", true, true, true},
		{"_x", false, false, true},
		{"2x", false, false, false},
		{"", false, false, false},
		{"has space", false, false, false},
		{"héllo", false, false, true},
		{"func", true, false, false},
	} {
		if got := names.IsIdent(tc.in); got != tc.ident {
			t.Errorf("IsIdent(%q) = %v", tc.in, got)
		}
		if got := names.IsExported(tc.in); got != tc.exported {
			t.Errorf("IsExported(%q) = %v", tc.in, got)
		}
		if got := names.IsGoIdent(tc.in); got != tc.goIdent {
			t.Errorf("IsGoIdent(%q) = %v", tc.in, got)
		}
	}
	for in, want := range map[string]bool{"shop": true, "acme.shop.v1": true, "a..b": false, ".a": false, "a.": false, "a-b": false, "": false} {
		if got := names.IsProtoPackage(in); got != want {
			t.Errorf("IsProtoPackage(%q) = %v", in, got)
		}
	}
}

// TestProtoNames pins the names that protoc derives from field names
// (checked against protoc's descriptors in gen/descriptor's tests).
func TestProtoNames(t *testing.T) {
	for _, tc := range []struct{ field, entry, json string }{
		{"labels", "LabelsEntry", "labels"},
		{"by_name", "ByNameEntry", "byName"},
		{"created_at", "CreatedAtEntry", "createdAt"},
		{"a_b_c", "ABCEntry", "aBC"},
		{"field1", "Field1Entry", "field1"},
		{"opt_2x", "Opt2xEntry", "opt2x"},
		{"a__b", "ABEntry", "aB"},
		{"Upper_case", "UpperCaseEntry", "UpperCase"},
	} {
		if got := names.MapEntry(tc.field); got != tc.entry {
			t.Errorf("MapEntry(%q) = %q, want %q", tc.field, got, tc.entry)
		}
		if got := names.JSONName(tc.field); got != tc.json {
			t.Errorf("JSONName(%q) = %q, want %q", tc.field, got, tc.json)
		}
	}
	if got := names.ProtoEnumValue("UserRole", "admin"); got != "USER_ROLE_ADMIN" {
		t.Errorf("ProtoEnumValue = %q", got)
	}
	if got := names.ProtoFile("acme.shop.v1"); got != "acme.shop.v1.proto" {
		t.Errorf("ProtoFile = %q", got)
	}
}

// TestFileStem checks the file names that would carry a build constraint
// or make a test file: a message AgentWindows generated
// agent_windows.yrpc.go, which the go command builds only on Windows.
func TestFileStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"user", "user"},
		{"windows", "windows"}, // no "_": go/build reads no constraint
		{"agent_windows", "agent_windows_message"},
		{"build_arm64", "build_arm64_message"},
		{"app_linux_amd64", "app_linux_amd64_message"},
		{"app_linux_test", "app_linux_test_message"},
		{"load_test", "load_test_message"},
		{"user_role", "user_role"},
		{"linux_user", "linux_user"},
		{"armory", "armory"},
		{"my_armory", "my_armory"},
	} {
		if got := names.FileStem(tc.in, "message"); got != tc.want {
			t.Errorf("FileStem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
