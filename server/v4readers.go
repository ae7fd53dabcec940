package server

import (
	"fmt"
	"net/http"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/tableaccess"
)

// v4Readers decodes, for every request, whether the client reads format
// version 4 (X-Iceberg-Column-Files: true) into the request context; the
// service decides what a client that does not may be answered
// (service.WithV4Reader).
func v4Readers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(service.ColumnFilesHeader)
		next.ServeHTTP(w, r.WithContext(tableaccess.WithV4Reader(r.Context(), columnFilesOK(&v))))
	})
}

// warning formats an RFC 9111 Warning header value (code 299, persistent
// miscellaneous warning) from text that holds no double quote.
func warning(text string) string {
	return fmt.Sprintf(`299 - "%s"`, text)
}
