package access

import "slices"

// PrivilegesOn lists the privileges that can be held on a securable of
// kind k: those grantable on k itself. A privilege grantable only on a
// container (table-create on a namespace) is not about the object below.
func PrivilegesOn(k ResourceKind) []Privilege {
	var out []Privilege
	for _, p := range AllPrivileges() {
		if slices.Contains(grantable[p], k) {
			out = append(out, p)
		}
	}
	return out
}
