// The db4 wavelet transform of one plane for the CPU backend; see
// wavelet_amd64.c.
#ifndef UHNO_WAVELET_H
#define UHNO_WAVELET_H

// uhno_wavelet_plane transforms the plane p (spatial shape n0 x n1 x n2;
// bit a of realmask set where axis a is a real axis, clear where it is
// padding of length 1) in place over `levels` levels, forward or inverse,
// exactly as wavelet.go's waveletPlaneGo. w is scratch of
// n0 n1 n2 + 2 max(n0, n1, n2) + 8 floats.
void uhno_wavelet_plane(float *p, long n0, long n1, long n2, int realmask, int levels, int inverse, float *w);

#endif
