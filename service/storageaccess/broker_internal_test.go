package storageaccess

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// TestTableRoute: the credentials and sign routes load answers name escape
// each namespace level and the table name, and join the levels with %1F.
func TestTableRoute(t *testing.T) {
	cases := []struct {
		ns   []string
		name string
		want string
	}{
		{[]string{"ns"}, "t", "v1/wh/namespaces/ns/tables/t"},
		{[]string{"a", "b"}, "t", "v1/wh/namespaces/a%1Fb/tables/t"},
		{[]string{"a b", "c/d"}, "t?x", "v1/wh/namespaces/a%20b%1Fc%2Fd/tables/t%3Fx"},
	}
	for _, c := range cases {
		id := ident.Ident{Namespace: c.ns, Name: c.name}
		require.Equal(t, c.want, tableRoute("wh", id))
		require.Equal(t, c.want+"/credentials", refreshEndpoint("wh", id))
	}
}

// fakeVendor returns cfg and one credential per prefix, recording the level
// it was asked for.
type fakeVendor struct {
	cfg      map[string]string
	prefixes []string
	err      error
	level    credentials.AccessLevel
}

func (v *fakeVendor) Vend(_ context.Context, _ credentials.WarehouseInfo, _ string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	v.level = level
	var out []credentials.StorageCredential
	for _, p := range v.prefixes {
		out = append(out, credentials.StorageCredential{Prefix: p, Config: map[string]string{
			"s3.access-key-id": "AK", "s3.secret-access-key": "SK", "internal.role-arn": "arn:secret"}})
	}
	return v.cfg, out, v.err
}

// fakeSigner describes a warehouse's signing as told and never signs.
type fakeSigner struct {
	cfg              map[string]string
	enabled, canVend bool
	endpoint         string
}

func (s *fakeSigner) Signing(_ credentials.WarehouseInfo, endpoint string) (map[string]string, bool, bool) {
	s.endpoint = endpoint
	return s.cfg, s.enabled, s.canVend
}

func (*fakeSigner) Sign(context.Context, credentials.WarehouseInfo, string, bool, credentials.AccessLevel, credentials.S3SignRequest, time.Time) (credentials.SignedRequest, error) {
	return credentials.SignedRequest{}, errors.New("not signing")
}

// fixture is a Broker over AllowAll with warehouse wh at s3://b/wh, the
// audit events it records, and the given vendor and signer.
func fixture(t testing.TB, vendor credentials.Vendor, signer credentials.Signer) (*Broker, *store.Warehouse, *[]store.AuditEvent) {
	t.Helper()
	var events []store.AuditEvent
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	w := &store.Warehouse{Name: "wh", Location: "s3://b/wh"}
	if err := st.WarehouseCreate(ctx, w); err != nil {
		t.Fatal(err)
	}
	b := New(Deps{
		Tables:      tableaccess.New(tableaccess.Options{Store: st, Authorizer: access.AllowAll{}, Clock: time.Now}),
		Credentials: vendor, Signer: signer,
		Audit: func(_ context.Context, e store.AuditEvent) { events = append(events, e) },
	})
	return b, w, &events
}

// TestGrantVends: vended config and credentials keep only allowlisted keys,
// each credential names its refresh route by its scheme, and the vend is
// audited at the level judged.
func TestGrantVends(t *testing.T) {
	v := &fakeVendor{cfg: map[string]string{"s3.region": "r", "internal.endpoint": "http://10.0.0.1"},
		prefixes: []string{"s3://b/wh/ns/t", "gs://g/wh/ns/t", "abfss://c@a.dfs.core.windows.net/wh/ns/t"}}
	b, w, events := fixture(t, v, nil)
	id := ident.Ident{Namespace: []string{"ns"}, Name: "t"}
	cfg, creds, err := b.Grant(context.Background(), w, id, "s3://b/wh/ns/t/metadata/1.json", nil, "s3://b/wh/ns/t", VendedCredentials)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"s3.region": "r"}, cfg)
	require.Equal(t, credentials.AccessReadWrite, v.level)
	refresh := "v1/wh/namespaces/ns/tables/t/credentials"
	require.Equal(t, []credentials.StorageCredential{
		{Prefix: "s3://b/wh/ns/t", Config: map[string]string{"s3.access-key-id": "AK", "s3.secret-access-key": "SK",
			"client.refresh-credentials-endpoint": refresh}},
		{Prefix: "gs://g/wh/ns/t", Config: map[string]string{"s3.access-key-id": "AK", "s3.secret-access-key": "SK",
			"gcs.oauth2.refresh-credentials-endpoint": refresh}},
		{Prefix: "abfss://c@a.dfs.core.windows.net/wh/ns/t", Config: map[string]string{"s3.access-key-id": "AK", "s3.secret-access-key": "SK",
			"adls.refresh-credentials-endpoint": refresh}},
	}, creds)
	require.Len(t, *events, 1)
	e := (*events)[0]
	require.Equal(t, ActionVendCredentials, e.Action)
	require.Equal(t, 200, e.Status)
	require.Equal(t, "access=read-write", e.Detail)
}

// TestGrantRefusals: no delegation gets an empty config and no audit; a
// location outside the warehouse gets no credential (403, audited); a
// failing vendor is a 503 whose text does not carry the vendor's.
func TestGrantRefusals(t *testing.T) {
	v := &fakeVendor{prefixes: []string{"s3://b/wh/ns/t"}}
	b, w, events := fixture(t, v, nil)
	ctx, id := context.Background(), ident.Ident{Namespace: []string{"ns"}, Name: "t"}

	cfg, creds, err := b.Grant(ctx, w, id, "", nil, "s3://b/wh/ns/t", NoDelegation)
	require.NoError(t, err)
	require.Equal(t, map[string]string{}, cfg)
	require.Nil(t, creds)
	require.Empty(t, *events)

	for _, loc := range []string{"s3://b/other/t", "s3://b/wh"} {
		_, _, err = b.Grant(ctx, w, id, "", nil, loc, VendedCredentials)
		require.Equal(t, fault.Forbidden, fault.KindOf(err), loc)
	}
	require.Len(t, *events, 2)
	require.Equal(t, 403, (*events)[1].Status)

	v.err = errors.New("sts: AccessDenied for arn:aws:iam::123:role/secret")
	_, _, err = b.Grant(ctx, w, id, "", nil, "s3://b/wh/ns/t", VendedCredentials)
	require.Equal(t, fault.Unavailable, fault.KindOf(err))
	require.NotContains(t, fault.ClientText(err), "arn:")

	// No vendor: an empty config, nothing audited.
	b, w, events = fixture(t, nil, nil)
	cfg, creds, err = b.Grant(ctx, w, id, "", nil, "s3://b/wh/ns/t", VendedCredentials)
	require.NoError(t, err)
	require.Equal(t, map[string]string{}, cfg)
	require.Nil(t, creds)
	require.Empty(t, *events)
}

// TestSigningChoice: signing is chosen when the warehouse enables it and
// the client asked for signing alone, the warehouse cannot vend, or there
// is no vendor; or when the table prefers it. The table's properties are
// read only in the last case.
func TestSigningChoice(t *testing.T) {
	signCfg := map[string]string{"s3.remote-signing-enabled": "true"}
	cases := []struct {
		name             string
		noSigner         bool
		s3               bool
		enabled, canVend bool
		noVendor         bool
		deleg            Delegation
		prefers          string
		sign, readProps  bool
	}{
		{name: "no signer", noSigner: true, deleg: RemoteSigning},
		{name: "not s3", deleg: RemoteSigning, enabled: true},
		{name: "signing alone asked", s3: true, enabled: true, canVend: true, deleg: RemoteSigning, sign: true},
		{name: "cannot vend", s3: true, enabled: true, deleg: VendedCredentials, sign: true},
		{name: "no vendor", s3: true, enabled: true, canVend: true, noVendor: true, deleg: VendedCredentials, sign: true},
		{name: "both asked, can vend", s3: true, enabled: true, canVend: true, deleg: VendedCredentials | RemoteSigning, readProps: true},
		{name: "table prefers", s3: true, canVend: true, deleg: VendedCredentials, prefers: "TRUE", sign: true, readProps: true},
		{name: "table does not prefer", s3: true, canVend: true, deleg: VendedCredentials, prefers: "false", readProps: true},
		{name: "not enabled, cannot vend", s3: true, deleg: RemoteSigning, readProps: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sg := &fakeSigner{enabled: c.enabled, canVend: c.canVend}
			if c.s3 {
				sg.cfg = signCfg
			}
			var signer credentials.Signer = sg
			if c.noSigner {
				signer = nil
			}
			var vendor credentials.Vendor = &fakeVendor{}
			if c.noVendor {
				vendor = nil
			}
			b, w, _ := fixture(t, vendor, signer)
			read := false
			cfg, err := b.signingChoice(w, ident.Ident{Namespace: []string{"ns"}, Name: "t"}, c.deleg, func() (map[string]string, error) {
				read = true
				return map[string]string{TablePropertyRemoteSigning: c.prefers}, nil
			})
			require.NoError(t, err)
			require.Equal(t, c.sign, cfg != nil)
			require.Equal(t, c.readProps, read)
			if c.s3 && !c.noSigner {
				require.Equal(t, "v1/wh/namespaces/ns/tables/t/sign", sg.endpoint)
			}
		})
	}
}

// TestTableShape: columns, nested ones by their dotted names, come in id
// order, with the default partition spec's fields.
func TestTableShape(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "p", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	meta, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, "s3://b/wh/ns/t", iceberg.Properties{"k": "v"})
	require.NoError(t, err)
	got := tableShape(meta, 2)
	require.Equal(t, 2, got.FormatVersion)
	require.Equal(t, "s3://b/wh/ns/t", got.Location)
	require.Equal(t, "v", got.Properties["k"])
	var names []string
	for _, c := range got.Columns {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"id", "p", "p.x", "ts"}, names)
	require.Equal(t, []credentials.PartitionField{{Name: "ts_day", Transform: "day", SourceIDs: []int{4}}}, got.Partition)
}

// TestSignRefusals: a malformed request is a 400 and a catalog without a
// signer a 403, each audited with its status (and the level judged).
func TestSignRefusals(t *testing.T) {
	b, _, events := fixture(t, nil, nil)
	ctx, id := context.Background(), ident.Ident{Namespace: []string{"ns"}, Name: "t"}
	_, err := b.SignS3Request(ctx, "wh", id, credentials.S3SignRequest{Method: "GET", Region: "r"})
	require.Equal(t, fault.BadRequest, fault.KindOf(err))
	_, err = b.SignS3Request(ctx, "wh", id, credentials.S3SignRequest{Method: "GET", URI: "https://b.s3/wh/ns/t/x", Region: "r"})
	require.Equal(t, fault.Forbidden, fault.KindOf(err))
	require.Len(t, *events, 2)
	for i, want := range []struct {
		status int
		detail string
	}{{400, ""}, {403, "access=read-write"}} {
		e := (*events)[i]
		require.Equal(t, ActionSignRequest, e.Action)
		require.Equal(t, want.status, e.Status)
		require.Equal(t, want.detail, e.Detail)
	}
}
