package server

import (
	"context"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/openapi"
)

// SignRequest implements openapi.StrictServerInterface (signRequest):
// remote signing of an S3 request for the table. A signed read may be
// reused by the engine for a while (Cache-Control: private); anything
// else is signed anew each time (no-cache).
func (s *Server) SignRequest(ctx context.Context, req openapi.SignRequestRequestObject) (openapi.SignRequestResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	b := req.Body
	if b.Provider != nil && *b.Provider != "" && !strings.EqualFold(*b.Provider, "s3") {
		return nil, badRequestf("Remote signing supports the s3 provider only, not %q", *b.Provider)
	}
	signed, err := s.rooms.storage.SignS3Request(ctx, req.Prefix, id, credentials.S3SignRequest{
		Region: b.Region, URI: b.Uri, Method: b.Method, Headers: b.Headers, Body: b.Body,
	})
	if err != nil {
		return nil, err
	}
	cache := "no-cache"
	if signed.Cacheable {
		cache = "private"
	}
	return openapi.SignRequest200JSONResponse{
		Body:    openapi.RemoteSignResult{Uri: signed.URI, Headers: signed.Headers},
		Headers: openapi.SignRequest200ResponseHeaders{CacheControl: &cache},
	}, nil
}
