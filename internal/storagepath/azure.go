package storagepath

import "strings"

// Azure locations name a container (an ADLS Gen2 "filesystem") and a
// storage account host: abfss://container@account.dfs.core.windows.net/key
// for the Data Lake endpoint, wasbs://container@account.blob.core.windows.net/key
// for the Blob endpoint. Both reach the same objects, so containment
// compares them through one identity (see same). Only the TLS schemes are
// accepted: abfs:// and wasb:// would send the vended SAS in clear.

// normalizeAzure handles what follows "abfss:" or "wasbs:".
func normalizeAzure(scheme, rest string) (string, error) {
	if !strings.HasPrefix(rest, "//") {
		return "", invalid("the container and account must be the authority (" + scheme + "://container@account.dfs.core.windows.net/path)")
	}
	auth, key, _ := strings.Cut(rest[2:], "/")
	container, host, ok := strings.Cut(auth, "@")
	if !ok || container == "" || host == "" {
		return "", invalid("an Azure location names container@account-host (" + scheme + "://container@account.dfs.core.windows.net/path)")
	}
	if !validContainer(container) {
		return "", invalid("Azure container names are 3-63 lowercase letters, digits and single '-', starting with a letter or digit")
	}
	if _, _, _, ok := splitAzureHost(host); !ok {
		return "", invalid("an Azure account host is lowercase account.dfs.<suffix> or account.blob.<suffix> (account: 3-24 letters and digits)")
	}
	return normalizeKey(scheme+"://"+container+"@"+host, key)
}

// splitAzureHost splits account.dfs.core.windows.net into its account, its
// service label (dfs or blob) and its endpoint suffix.
func splitAzureHost(host string) (account, service, suffix string, ok bool) {
	account, rest, _ := strings.Cut(host, ".")
	service, suffix, _ = strings.Cut(rest, ".")
	if len(account) < 3 || len(account) > 24 || (service != "dfs" && service != "blob") || suffix == "" {
		return "", "", "", false
	}
	for i := 0; i < len(account); i++ {
		if c := account[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", "", "", false
		}
	}
	for _, label := range strings.Split(suffix, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return "", "", "", false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", "", "", false
			}
		}
	}
	return account, service, suffix, true
}

// validContainer applies Azure's container naming rules.
func validContainer(c string) bool {
	if len(c) < 3 || len(c) > 63 || c[0] == '-' || c[len(c)-1] == '-' || strings.Contains(c, "--") {
		return false
	}
	for i := 0; i < len(c); i++ {
		if ch := c[i]; !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

// same maps a canonical location to the form containment compares: an
// Azure location loses its scheme and service label, so the dfs and blob
// names of one object are one location; others are unchanged.
func same(canon string) string {
	var rest string
	switch {
	case strings.HasPrefix(canon, "abfss://"):
		rest = canon[len("abfss://"):]
	case strings.HasPrefix(canon, "wasbs://"):
		rest = canon[len("wasbs://"):]
	default:
		return canon
	}
	auth, key, hasKey := strings.Cut(rest, "/")
	container, host, _ := strings.Cut(auth, "@")
	account, _, suffix, _ := splitAzureHost(host)
	out := "azure://" + container + "@" + account + "." + suffix
	if hasKey {
		out += "/" + key
	}
	return out
}

// IsAzure reports whether loc is an Azure location (abfss:// or wasbs://).
func IsAzure(loc string) bool {
	return strings.HasPrefix(loc, "abfss://") || strings.HasPrefix(loc, "wasbs://")
}
