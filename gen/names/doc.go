// Package names holds the naming rules that yrpc's generator, loader and
// CLI share, so that one schema name always gives the same Go name, file
// name and package name: GoName ("created_at" -> "CreatedAt"), Snake
// ("GetURLInfo" -> "get_url_info"), PackageName, ImportName and
// DefaultPackage (the protobuf package a schema gets from its import path,
// never from a directory name), and the identifier checks that schema names
// must pass (IsIdent, IsExported, IsGoIdent, IsProtoPackage).
//
// Every function is pure and safe for concurrent use.
package names
