// Package tableaccess is what every room of the service reaches tables
// through: the warehouse lookup and its short cache, the file IO of a
// warehouse (inside its prefixes only, with its storage profile's
// identity), the one table loader with its parsed-metadata cache, the
// authorizer and the checks built on it, the change-event builders and
// the caller's identity, the mapping of store errors, the clock guard,
// the clock and the logger. It is built once per service and handed to
// each room as one value; it imports no room.
package tableaccess
