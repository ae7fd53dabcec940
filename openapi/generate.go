// Package openapi holds the code generated from catalog.yaml by oapi-codegen:
// wire types, the chi router and the strict server interface. Nothing here is
// written by hand; run `make generate` after editing catalog.yaml.
package openapi

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml catalog.yaml
