package load_test

import (
	"encoding/json"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// FuzzCheck feeds Check specs decoded from arbitrary JSON, seeded with the
// encoding of a valid spec: Check must never panic, whatever the spec holds
// (nil entries, missing enums, odd kinds).
func FuzzCheck(f *testing.F) {
	seed, err := json.Marshal(validSpec())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"messages":[null,{"fields":[null,{"kind":"enum"},{"kind":"message","map_key":"float"}]}],"services":[null,{"methods":[null,{"mock":{"action":"value","value":"[1]"},"hash_key":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var spec gen.Spec
		if json.Unmarshal(data, &spec) != nil {
			return
		}
		_ = load.Check(&spec)
	})
}
