package v4convert

// AssignRowIDs gives every data row that has no first_row_id one, in row
// order, starting at next (the table's next-row-id), as the v3 upgrade
// rules do for files written before row lineage: each such file takes the
// range [next, next+record_count) and next moves past it. Rows that have a
// first_row_id keep it. It returns how many row ids were assigned, the
// amount the table's next-row-id advances (the snapshot's added-rows).
func AssignRowIDs(out *Output, next int64) int64 {
	var assigned int64
	for i := range out.Data {
		r := &out.Data[i]
		if r.Tracking.FirstRowID != nil {
			continue
		}
		r.Tracking.FirstRowID = ptr(next + assigned)
		assigned += r.RecordCount
	}
	return assigned
}
