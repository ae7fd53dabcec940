// Command gcsfake serves, on one local port, fake-gcs-server and a
// stand-in for the two Google endpoints the catalog's GCS vending calls:
// the OAuth token endpoint (a service-account JWT grant) and STS (the
// token exchange that downscopes it). Google's STS cannot run offline, so
// tests of GCS clients against the catalog use this; it checks the form
// of each exchange but not the access boundary, which only Google
// enforces (credentials/vending's shim test models that).
//
// It prints its base URL on stdout and runs until killed. GET /_requests
// lists every storage request as {"method", "path", "token"} (token: the
// bearer token sent, "" when none), so a test can tell which token wrote
// what.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// rootToken is what the token endpoint grants; only it may be exchanged.
const rootToken = "root-token"

type request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Token  string `json:"token"`
}

type server struct {
	gcs    http.Handler
	mu     sync.Mutex
	minted int
	seen   []request
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/token":
		writeJSON(w, http.StatusOK, map[string]any{"access_token": rootToken, "token_type": "Bearer", "expires_in": 3600})
	case "/v1/token":
		s.exchange(w, r)
	case "/_requests":
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.seen)
	default:
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		s.seen = append(s.seen, request{Method: r.Method, Path: r.URL.RequestURI(), Token: token})
		s.mu.Unlock()
		s.gcs.ServeHTTP(w, r)
	}
}

// exchange answers an STS token exchange of the root token with a new
// token per call; anything else is refused as Google would (400).
func (s *server) exchange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("subject_token") != rootToken ||
		r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	var opts struct {
		Boundary struct {
			Rules []json.RawMessage `json:"accessBoundaryRules"`
		} `json:"accessBoundary"`
	}
	if json.Unmarshal([]byte(r.Form.Get("options")), &opts) != nil || len(opts.Boundary.Rules) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "no access boundary"})
		return
	}
	s.mu.Lock()
	s.minted++
	tok := fmt.Sprintf("bounded-%d", s.minted)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	buckets := flag.String("buckets", "lake", "comma-separated buckets to create")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	gcs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, PublicHost: ln.Addr().String(), Scheme: "http"})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range strings.Split(*buckets, ",") {
		gcs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	fmt.Println(url)
	log.Fatal(http.Serve(ln, &server{gcs: gcs.HTTPHandler()}))
}
