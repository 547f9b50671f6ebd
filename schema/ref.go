package schema

import (
	"errors"
	"reflect"
)

// Ref resolves a message reference: the method expression T.Type of a type T
// that embeds Message. It returns T's name and import path, or an error
// saying why ref is not such a reference. Builders use it; users do not need
// it.
func Ref(ref any) (name, pkgPath string, err error) {
	if ref == nil {
		return "", "", errors.New("message reference is nil; pass a method expression like Address.Type")
	}
	t := reflect.TypeOf(ref)
	if t.Kind() != reflect.Func || t.NumIn() != 1 || t.NumOut() != 0 || t.IsVariadic() {
		return "", "", errors.New("message reference must be a method expression like Address.Type, got a " + t.String())
	}
	in := t.In(0)
	if in.Kind() == reflect.Pointer {
		in = in.Elem()
	}
	if in.Name() == "" || !in.Implements(reflect.TypeFor[MessageSchema]()) {
		return "", "", errors.New("message reference " + t.In(0).String() + " does not embed schema.Message")
	}
	return in.Name(), in.PkgPath(), nil
}

// RefString returns the source form of a reference for error messages:
// "Address.Type" for a valid reference, else a description of the value.
func RefString(ref any) string {
	if name, _, err := Ref(ref); err == nil {
		return name + ".Type"
	}
	if ref == nil {
		return "nil"
	}
	return reflect.TypeOf(ref).String()
}
