// Package v4read reads the manifests of format version 4 tables (roots and
// leaves, with inheritance and manifest deletion vectors applied) and keeps
// the caches that make repeated reads cheap: decoded roots and narrow leaf
// reads, and parsed footers. Manifests are never rewritten once named, so
// nothing cached goes stale. It is shared by planning and the commit path;
// it reaches storage only through the file IO function it is given and
// knows nothing of the catalog's orchestration (package service).
package v4read
