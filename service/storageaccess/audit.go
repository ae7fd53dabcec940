package storageaccess

import (
	"context"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// ActionVendCredentials is the action of an audit event recording a
// credential vend.
const ActionVendCredentials = "vend-credentials"

// auditVend records a credential vend for table at level; err is why it
// was refused or failed.
func (b *Broker) auditVend(ctx context.Context, table access.Resource, level credentials.AccessLevel, err error) {
	b.auditStorageAccess(ctx, ActionVendCredentials, table, level, "", err)
}

// auditStorageAccess records an access to a table's files (a vend, a
// signature): the access level judged, detail, and the status the request
// answers when it failed (fault's status table, which the server serves).
func (b *Broker) auditStorageAccess(ctx context.Context, action string, table access.Resource, level credentials.AccessLevel, detail string, err error) {
	e := store.AuditEvent{Action: action, Resource: table.String(), Status: 200, Detail: detail}
	if level != "" {
		e.Detail = strings.TrimSpace(e.Detail + " access=" + string(level))
	}
	if err != nil {
		e.Status = fault.StatusOf(err)
	}
	b.d.Audit(ctx, e)
}
