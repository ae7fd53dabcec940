package service

import (
	"github.com/lakehold/catalog/service/access"
)

// tableResource names a table securable.
func tableResource(warehouse string, id Ident) Resource {
	return access.TableResource(warehouse, id.Namespace, id.Name)
}

// viewResource names a view securable.
func viewResource(warehouse string, id Ident) Resource {
	return access.ViewResource(warehouse, id.Namespace, id.Name)
}

// namespaceResource names a namespace securable.
func namespaceResource(warehouse string, levels []string) Resource {
	return access.NamespaceResource(warehouse, levels)
}
