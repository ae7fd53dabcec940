// Package scantasks holds the wire types of a scan plan's file scan tasks
// and delete files, generated from scantasks.json by oapi-codegen: the
// server encodes them (package openapi refers to these types) and REST
// readers such as internal/restread decode them, without importing the
// server's generated package. Nothing here is written by hand; run
// `make generate` after editing scantasks.json.
package scantasks

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml scantasks.json
