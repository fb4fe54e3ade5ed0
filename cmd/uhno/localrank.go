package main

import "strconv"

// localRankVars are the launchers' variables that give a process's rank
// among the ranks on its node: Open MPI's mpirun, Slurm's srun, MPICH's
// hydra, and torchrun-style launchers.
var localRankVars = []string{"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "LOCAL_RANK"}

// localRank is this process's rank on its node (0 without a launcher, or
// when the variable holds no number): under uhno-cuda, the GPU it
// computes on, so that `mpirun -np 8` on an 8-GPU node gives each rank
// its own device.
func localRank(env func(string) string) int {
	for _, v := range localRankVars {
		if s := env(v); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n
			}
		}
	}
	return 0
}
