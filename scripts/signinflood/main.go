// Command signinflood fires concurrent wrong sign-ins at a catalog's token
// endpoint and prints how they were answered, for scripts/signin-flood.sh.
//
//	go run ./scripts/signinflood -url http://127.0.0.1:8181 -n 200 -client-id lh-... [-distinct]
//
// With -distinct every request names its own unknown client id; otherwise
// all name -client-id with a wrong secret. All requests are released at
// once. Output: one line "n=<n> <status>=<count> ... max_ms=<slowest>".
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8181", "catalog base URL")
	n := flag.Int("n", 24, "concurrent requests")
	id := flag.String("client-id", "lh-nosuchclient00000", "client id to send (a real one: its wrong secret)")
	distinct := flag.Bool("distinct", false, "a different unknown client id per request")
	flag.Parse()

	tr := &http.Transport{MaxIdleConnsPerHost: *n, MaxConnsPerHost: 0}
	client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	var (
		mu     sync.Mutex
		counts = map[string]int{}
		slow   time.Duration
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	for i := range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cid := *id
			if *distinct {
				cid = fmt.Sprintf("lh-flood%012d", i)
			}
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {cid},
				"client_secret": {"wrong-secret-wrong-secret-wrong-secret-0000"}, "scope": {"catalog"}}
			<-start
			t0 := time.Now()
			resp, err := client.Post(*base+"/v1/oauth/tokens", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
			key := "error"
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				key = fmt.Sprint(resp.StatusCode)
			}
			d := time.Since(t0)
			mu.Lock()
			counts[key]++
			slow = max(slow, d)
			mu.Unlock()
		}()
	}
	time.Sleep(100 * time.Millisecond) // let every goroutine reach the gate
	close(start)
	wg.Wait()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d", *n)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, counts[k])
	}
	fmt.Fprintf(&b, " max_ms=%d", slow.Milliseconds())
	fmt.Fprintln(os.Stdout, b.String())
}
