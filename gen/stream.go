package gen

import (
	"fmt"
	"strings"
)

// refuseStreams returns an error naming every stream method of m: the
// generator does not emit streams yet, because the runtime has no stream
// API for generated code to call. Check accepts stream methods (describe
// and proto show them); only Generate refuses them, here. When rt has
// streams, emitting them replaces this function: a stream kind in the
// rt.MethodDesc entry, the typed stream interfaces in the server interface
// and the client, and a Handle that takes a stream.
func (m *model) refuseStreams() error {
	var streams []string
	for _, s := range m.services {
		for _, mm := range s.methods {
			if !mm.kind.Stream() {
				continue
			}
			at := ""
			if mm.Pos != "" {
				at = " at " + mm.Pos
			}
			streams = append(streams, fmt.Sprintf("%s (%s%s)", mm.full, mm.kind, at))
		}
	}
	if len(streams) == 0 {
		return nil
	}
	return fmt.Errorf("gen: streams are not generated yet (the runtime has no stream API); remove the stream methods to generate the rest: %s", strings.Join(streams, ", "))
}
