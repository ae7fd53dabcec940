package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ADLSProfile says how to mint SAS tokens for a warehouse on Azure Data
// Lake Storage Gen2 (or Blob Storage on the same account): with the
// account's shared key (a service SAS), or as a service principal through
// Entra ID's client-credential grant (a user-delegation SAS). Either
// secret is sealed when stored and never returned.
//
// A SAS is scoped to the table's directory (sr=d), which Azure accepts
// only on accounts with a hierarchical namespace (ADLS Gen2).
type ADLSProfile struct {
	Type        string `json:"type"` // "adls"
	AccountName string `json:"account-name"`
	// Filesystem is the ADLS filesystem, the Blob container.
	Filesystem string `json:"filesystem"`
	// EndpointSuffix is the cloud's storage suffix (default
	// core.windows.net; core.chinacloudapi.cn, core.usgovcloudapi.net...).
	EndpointSuffix string `json:"endpoint-suffix,omitempty"`
	// Endpoint replaces https://<account>.blob.<suffix> for the catalog's
	// own calls: http://127.0.0.1:10000 for Azurite (the account then
	// leads the path). Clients reach storage by the table location's host.
	Endpoint    string `json:"endpoint,omitempty"`
	SASLifetime string `json:"sas-lifetime,omitempty"`
	// AccountKey is the shared key, accepted on input only.
	AccountKey       string `json:"account-key,omitempty"`
	SealedAccountKey string `json:"sealed-account-key,omitempty"`
	// TenantID, ClientID and ClientSecret name a service principal with
	// the Storage Blob Delegator and Data Contributor roles on the account;
	// AuthorityHost replaces https://login.microsoftonline.com.
	TenantID           string `json:"tenant-id,omitempty"`
	ClientID           string `json:"client-id,omitempty"`
	ClientSecret       string `json:"client-secret,omitempty"`
	SealedClientSecret string `json:"sealed-client-secret,omitempty"`
	AuthorityHost      string `json:"authority-host,omitempty"`
}

var (
	adlsAccount    = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	adlsFilesystem = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9])*$`)
	adlsSuffix     = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$`)
)

// ParseADLSProfile validates a profile sent by an operator and seals its
// secret. It fails for a bad account, filesystem, suffix, endpoint or
// lifetime, for no secret or both kinds, or when no server key is set.
func ParseADLSProfile(raw []byte, sealer *Sealer) (*ADLSProfile, error) {
	var p ADLSProfile
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("storage profile: %w", err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("storage profile: %w", err)
	}
	var err error
	if p.AccountKey != "" {
		p.SealedAccountKey, err = sealer.Seal(p.AccountKey)
	} else {
		p.SealedClientSecret, err = sealer.Seal(p.ClientSecret)
	}
	if err != nil {
		return nil, fmt.Errorf("storage profile: %w", err)
	}
	p.AccountKey, p.ClientSecret = "", ""
	return &p, nil
}

func (p *ADLSProfile) check() error {
	principal := p.TenantID != "" || p.ClientID != "" || p.ClientSecret != ""
	switch {
	case p.Type != "adls":
		return errors.New(`type must be "adls"`)
	case !adlsAccount.MatchString(p.AccountName):
		return errors.New("account-name must be 3-24 lowercase letters and digits")
	case len(p.Filesystem) < 3 || len(p.Filesystem) > 63 || !adlsFilesystem.MatchString(p.Filesystem):
		return errors.New("filesystem must be 3-63 lowercase letters, digits and single '-'")
	case p.EndpointSuffix != "" && !adlsSuffix.MatchString(p.EndpointSuffix):
		return errors.New("endpoint-suffix must be a DNS suffix such as core.windows.net")
	case p.SealedAccountKey != "" || p.SealedClientSecret != "":
		return errors.New("sealed secrets cannot be set")
	case p.AccountKey != "" && principal:
		return errors.New("give either account-key or tenant-id, client-id and client-secret, not both")
	case p.AccountKey == "" && (p.TenantID == "" || p.ClientID == "" || p.ClientSecret == ""):
		return errors.New("account-key, or tenant-id, client-id and client-secret, are required")
	}
	if p.Endpoint != "" {
		if _, _, err := p.BlobService(); err != nil {
			return err
		}
	}
	if p.AuthorityHost != "" {
		if u, err := url.Parse(p.AuthorityHost); err != nil || u.Scheme != "https" || u.Host == "" {
			return errors.New("authority-host must be an https URL")
		}
	}
	if p.SASLifetime != "" {
		if d, err := time.ParseDuration(p.SASLifetime); err != nil || d < 5*time.Minute || d > 7*24*time.Hour {
			return errors.New("sas-lifetime must be a duration from 5m to 168h")
		}
	}
	return nil
}

// Suffix returns the endpoint suffix (default core.windows.net).
func (p *ADLSProfile) Suffix() string {
	if p.EndpointSuffix == "" {
		return "core.windows.net"
	}
	return p.EndpointSuffix
}

// Lifetime returns how long a vended SAS is valid (default 1h).
func (p *ADLSProfile) Lifetime() time.Duration {
	d, err := time.ParseDuration(p.SASLifetime)
	if err != nil || d == 0 {
		return time.Hour
	}
	return d
}

// BlobService returns the scheme and host the catalog calls for the Blob
// service: the endpoint's, or https and account.blob.<suffix>. It fails
// when the endpoint is not an http(s) URL with a host and nothing else.
func (p *ADLSProfile) BlobService() (scheme, host string, err error) {
	if p.Endpoint == "" {
		return "https", p.AccountName + ".blob." + p.Suffix(), nil
	}
	u, err := url.Parse(p.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
		return "", "", errors.New("endpoint must be an http(s) URL with a host only, such as http://127.0.0.1:10000")
	}
	return u.Scheme, u.Host, nil
}

// Emulator reports whether the endpoint is a local emulator (Azurite),
// which takes the account as the first path segment.
func (p *ADLSProfile) Emulator() bool {
	_, host, err := p.BlobService()
	return err == nil && p.Endpoint != "" && (strings.HasPrefix(host, "127.0.0.1") || strings.HasPrefix(host, "localhost"))
}

// ServiceURL is the Blob service URL the catalog calls.
func (p *ADLSProfile) ServiceURL() string {
	scheme, host, _ := p.BlobService()
	if p.Emulator() {
		return scheme + "://" + host + "/" + p.AccountName
	}
	return scheme + "://" + host
}

// SharedKey reports whether the profile signs with the account key.
func (p *ADLSProfile) SharedKey() bool { return p.SealedAccountKey != "" }

// Redacted returns the profile as shown to operators: no secret at all.
func (p ADLSProfile) Redacted() ADLSProfile {
	p.AccountKey, p.SealedAccountKey, p.ClientSecret, p.SealedClientSecret = "", "", "", ""
	return p
}

// ADLSLocation is a table location on Azure split for a SAS: the
// location's own host (what clients key a SAS by), the container and the
// directory inside it (no leading or trailing slash).
type ADLSLocation struct {
	Host      string // account.dfs.<suffix> or account.blob.<suffix>
	Container string
	Dir       string
}

// ParseADLSLocation checks that a canonical abfss:// or wasbs:// location
// lies in the profile's account, suffix and filesystem, below its root:
// it fails otherwise (a SAS for another account would be refused by Azure,
// and one for the whole filesystem is never minted).
func (p *ADLSProfile) ParseADLSLocation(loc string) (ADLSLocation, error) {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok || (scheme != "abfss" && scheme != "wasbs") {
		return ADLSLocation{}, fmt.Errorf("not an abfss:// or wasbs:// location")
	}
	auth, dir, _ := strings.Cut(rest, "/")
	container, host, _ := strings.Cut(auth, "@")
	if container != p.Filesystem || (host != p.AccountName+".dfs."+p.Suffix() && host != p.AccountName+".blob."+p.Suffix()) {
		return ADLSLocation{}, fmt.Errorf("location is not in filesystem %s of account %s", p.Filesystem, p.AccountName)
	}
	if dir = strings.Trim(dir, "/"); dir == "" {
		return ADLSLocation{}, errors.New("a SAS is never minted for a whole filesystem")
	}
	return ADLSLocation{Host: host, Container: container, Dir: dir}, nil
}

// SASPermissions returns the directory-SAS permissions for an access
// level: read and list; writers also add, create, write and delete.
func SASPermissions(level AccessLevel) string {
	if level == AccessReadWrite {
		return "racwdl"
	}
	return "rl"
}

// ADLSConfig returns the FileIO properties that carry a SAS for the
// account of loc, under both its dfs and blob host names (a table written
// through abfss:// may be read through wasbs://), in the names Java's
// ADLSFileIO, PyIceberg and iceberg-go read: adls.sas-token.<host> and
// adls.sas-token-expires-at-ms.<host>.
func ADLSConfig(p *ADLSProfile, sas string, expires time.Time) map[string]string {
	ms := strconv.FormatInt(expires.UnixMilli(), 10)
	cfg := map[string]string{}
	for _, svc := range []string{"dfs", "blob"} {
		host := p.AccountName + "." + svc + "." + p.Suffix()
		cfg["adls.sas-token."+host] = sas
		cfg["adls.sas-token-expires-at-ms."+host] = ms
	}
	return cfg
}
