package main

import "testing"

// TestLocalRank: the first launcher variable that holds a number wins;
// none gives 0.
func TestLocalRank(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want int
	}{
		{nil, 0},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "3"}, 3},
		{map[string]string{"SLURM_LOCALID": "5"}, 5},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "x", "SLURM_LOCALID": "2"}, 2},
		{map[string]string{"LOCAL_RANK": "-1"}, 0},
		{map[string]string{"MPI_LOCALRANKID": "7", "LOCAL_RANK": "1"}, 7},
	} {
		if got := localRank(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("%v: local rank %d, want %d", tt.env, got, tt.want)
		}
	}
}
