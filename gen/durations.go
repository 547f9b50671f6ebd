package gen

import (
	"strconv"
	"time"

	"github.com/dave/jennifer/jen"
)

// durationLit renders d as Go source: "300 * time.Millisecond",
// "time.Second", "time.Duration(1500)".
func durationLit(d time.Duration) jen.Code {
	units := []struct {
		d    time.Duration
		name string
	}{
		{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
		{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"},
	}
	for _, u := range units {
		if d%u.d != 0 {
			continue
		}
		if d == u.d {
			return jen.Qual(timePkg, u.name)
		}
		return jen.Id(strconv.FormatInt(int64(d/u.d), 10)).Op("*").Qual(timePkg, u.name)
	}
	return jen.Qual(timePkg, "Duration").Call(jen.Id(strconv.FormatInt(int64(d), 10)))
}
