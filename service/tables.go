package service

import "github.com/lakehold/catalog/service/tables"

// TableResult is what table loads and commits return (tables.TableResult).
type TableResult = tables.TableResult

// CreateTableInput is a createTable request (tables.CreateTableInput).
type CreateTableInput = tables.CreateTableInput
