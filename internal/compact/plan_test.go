package compact

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestThresholdsFrom(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  Thresholds
		bad   bool
	}{
		{"defaults", nil, Thresholds{8, 0.5}, false},
		{"both", map[string]string{PropMaxFiles: "3", PropMaxRetiredRatio: "0.25"}, Thresholds{3, 0.25}, false},
		{"zero-files", map[string]string{PropMaxFiles: "0"}, Thresholds{0, 0.5}, false},
		{"negative-files", map[string]string{PropMaxFiles: "-1"}, Thresholds{}, true},
		{"text-files", map[string]string{PropMaxFiles: "many"}, Thresholds{}, true},
		{"negative-ratio", map[string]string{PropMaxRetiredRatio: "-0.1"}, Thresholds{}, true},
		{"nan-ratio", map[string]string{PropMaxRetiredRatio: "NaN"}, Thresholds{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ThresholdsFrom(tc.props)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSelect(t *testing.T) {
	th := Thresholds{MaxFiles: 2, MaxRetiredRatio: 0.5}
	bases := []Base{
		{Location: "z-many", RecordCount: 10, SizeInBytes: 1000, ColumnFiles: 3, Retired: 0},
		{Location: "plain", RecordCount: 10, SizeInBytes: 1000, Retired: 900}, // nothing to fold
		{Location: "at-limit", RecordCount: 10, SizeInBytes: 1000, ColumnFiles: 2, Retired: 500},
		{Location: "retired", RecordCount: 10, SizeInBytes: 1000, ColumnFiles: 1, Retired: 501},
		{Location: "all-deleted", RecordCount: 10, SizeInBytes: 1000, Deleted: 10},
		{Location: "both", RecordCount: 10, SizeInBytes: 100, ColumnFiles: 5, Retired: 90},
	}
	got := Select(bases, th)
	var locs []string
	reasons := map[string][]string{}
	for _, p := range got {
		locs = append(locs, p.Location)
		reasons[p.Location] = p.Reasons
	}
	require.Equal(t, []string{"all-deleted", "both", "retired", "z-many"}, locs)
	require.Equal(t, []string{ReasonTooManyFiles, ReasonRetiredBytes}, reasons["both"])
	require.Equal(t, []string{ReasonRetiredBytes}, reasons["retired"])
	require.Equal(t, []string{ReasonAllRowsDeleted}, reasons["all-deleted"])
	require.InDelta(t, 0.9, got[1].RetiredRatio, 1e-9)
}

func TestRetired(t *testing.T) {
	base := map[int]int64{1: 100, 2: 200, 3: 300}
	for _, tc := range []struct {
		name          string
		files         []FileColumns
		rows, deleted int64
		want          int64
	}{
		{"nothing", nil, 10, 0, 0},
		{"superseded-base-column", []FileColumns{{Bytes: map[int]int64{2: 50}, Live: []int{2}}}, 10, 0, 200},
		// the older file still stores field 2 although only 3 is read from it
		{"partly-retired-file", []FileColumns{{Bytes: map[int]int64{2: 50, 3: 60}, Live: []int{3}}, {Bytes: map[int]int64{2: 70}, Live: []int{2}}}, 10, 0, 200 + 300 + 50},
		// live bytes 100+200+300 = 600; half the rows deleted
		{"deleted-rows", nil, 10, 5, 300},
		{"deleted-more-than-rows", nil, 10, 20, 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Retired(base, tc.files, tc.rows, tc.deleted))
		})
	}
}

func FuzzThresholdsFrom(f *testing.F) {
	f.Add("8", "0.5")
	f.Add("-3", "1e309")
	f.Fuzz(func(t *testing.T, files, ratio string) {
		th, err := ThresholdsFrom(map[string]string{PropMaxFiles: files, PropMaxRetiredRatio: ratio})
		if err == nil && (th.MaxFiles < 0 || th.MaxRetiredRatio < 0 || th.MaxRetiredRatio != th.MaxRetiredRatio) {
			t.Fatalf("accepted invalid thresholds %+v", th)
		}
	})
}
