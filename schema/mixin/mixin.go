package mixin

import "github.com/yrpc/yrpc/schema"

// Schema is the base type of a mixin: embed it and override Fields and/or
// Annotations. Its zero value contributes nothing.
type Schema struct{}

// Fields returns no fields.
func (Schema) Fields() []schema.Field { return nil }

// Annotations returns no annotations.
func (Schema) Annotations() []schema.Annotation { return nil }

var _ schema.Mixin = Schema{}
