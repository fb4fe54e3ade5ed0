package data

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"uhno/internal/data/h5"
)

// FileStamp identifies the content of a data file as a training run saw
// it, so that a resumed run can refuse a file that was truncated, extended,
// rewritten or replaced since: its size, its modification time (for
// messages only) and a SHA-256 over its size and sampled blocks.
//
// The checksum is sampled, not full: the first and last MiB (the HDF5
// superblock and object headers, the end of the last dataset) and 64
// blocks of 64 KiB evenly spaced in between, 6 MiB in all; a file of at
// most 6 MiB is hashed whole. A full SHA-256 would read the whole file at
// every start and resume, and during the run at every checkpoint: tens of
// seconds for a few GB, and much longer for PDEBench's 3D files, while 6
// MiB take milliseconds from the page cache. What it catches: any change of
// size (truncation, an append, most replacements), a regenerated or other
// file (HDF5 writes timestamps into its object headers, so even a
// regeneration with the same values differs in the first MiB, and other
// values differ in every block), and in-place damage inside a sampled
// block. What it misses: a same-size change confined to bytes between the
// samples. The modification time is not compared, so a copied or touched
// file with the same bytes is accepted.
//
// Content identifies the values of a file uhno generated
// (h5.File.ContentDigest), "" for other files. A file whose bytes differ
// but whose Content is the run's, verified against its values
// (h5.File.VerifyContent, a full read made only then), is accepted: the
// same data generated again, on this machine or another (a GPU machine
// that trained, a cluster node with its own data cache); so is any other
// change of bytes that leaves every value as it was (appended bytes, say),
// since the values are what a run depends on. A stamp recorded without
// Content (older runs, files uhno did not write) accepts only the same
// bytes.
type FileStamp struct {
	Size    int64  `json:"size"`
	ModTime string `json:"mod_time"` // RFC 3339 UTC; informational
	SHA256  string `json:"sampled_sha256"`
	Content string `json:"content_sha256,omitempty"`
}

// The sampling of FileStamp.SHA256.
const (
	stampHead   = 1 << 20
	stampTail   = 1 << 20
	stampBlock  = 64 << 10
	stampBlocks = 64
)

// stampRanges returns the [offset, length] byte ranges of a file of the
// given size that FileStamp hashes, in increasing order, without overlap.
func stampRanges(size int64) [][2]int64 {
	if size <= stampHead+stampTail+stampBlocks*stampBlock {
		return [][2]int64{{0, size}}
	}
	r := [][2]int64{{0, stampHead}}
	// Blocks start evenly spaced in [head, size-tail-block]; the spacing
	// is at least one block, since span >= blocks*block.
	span := size - stampHead - stampTail
	for i := range int64(stampBlocks) {
		r = append(r, [2]int64{stampHead + i*(span-stampBlock)/(stampBlocks-1), stampBlock})
	}
	return append(r, [2]int64{size - stampTail, stampTail})
}

// StampFile returns the FileStamp of the file at path, with its Content.
// Errors name it.
func StampFile(path string) (FileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileStamp{}, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	st, err := stampOf(f, path)
	if err != nil {
		return FileStamp{}, err
	}
	st.Content = contentOf(path)
	return st, nil
}

// contentOf is the file's h5.File.ContentDigest, "" when it has none or
// does not open as a complete HDF5 file (the byte stamp still guards it).
func contentOf(path string) string {
	f, err := h5.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	d, err := f.ContentDigest()
	if err != nil {
		return ""
	}
	return d
}

// stampOf computes the stamp of the open file f (named path in errors).
func stampOf(f *os.File, path string) (FileStamp, error) {
	st, err := f.Stat()
	if err != nil {
		return FileStamp{}, fmt.Errorf("data: %w", err)
	}
	size := st.Size()
	h := sha256.New()
	var sz [8]byte
	binary.LittleEndian.PutUint64(sz[:], uint64(size))
	h.Write(sz[:])
	for _, r := range stampRanges(size) {
		n, err := io.Copy(h, io.NewSectionReader(f, r[0], r[1]))
		if err != nil {
			return FileStamp{}, fmt.Errorf("data: %s: reading bytes %d..%d: %v", path, r[0], r[0]+r[1], err)
		}
		if n != r[1] {
			return FileStamp{}, fmt.Errorf("data: %s: ends at byte %d while reading it, %d bytes a moment before (truncated under the run)", path, r[0]+n, size)
		}
	}
	return FileStamp{
		Size:    size,
		ModTime: st.ModTime().UTC().Format(time.RFC3339Nano),
		SHA256:  hex.EncodeToString(h.Sum(nil)),
	}, nil
}

// Match returns nil when now, the stamp of the file at path today, shows
// the content s recorded, and otherwise a one-line error naming path and
// both sizes or checksums. Where the bytes differ but both stamps carry
// the same Content, the file's values are read and checked against it
// (the same data generated again): nil if they hold.
func (s FileStamp) Match(path string, now FileStamp) error {
	if (now.Size != s.Size || now.SHA256 != s.SHA256) && s.Content != "" && now.Content == s.Content {
		f, err := h5.Open(path)
		if err != nil {
			return fmt.Errorf("data: %w", err)
		}
		defer f.Close()
		if err := f.VerifyContent(); err != nil {
			why := strings.TrimPrefix(err.Error(), "h5: "+path+": ")
			return fmt.Errorf("data: %s changed (modified %s): its bytes differ from the run's and %s", path, now.ModTime, why)
		}
		return nil
	}
	switch {
	case now.Size != s.Size:
		return fmt.Errorf("data: %s has %d bytes (modified %s), the run recorded %d bytes (as of %s): truncated, extended or replaced",
			path, now.Size, now.ModTime, s.Size, s.ModTime)
	case now.SHA256 != s.SHA256:
		return fmt.Errorf("data: %s changed (modified %s): same size, %d bytes, but its sampled SHA-256 is %.16s..., the run recorded %.16s... (as of %s)",
			path, now.ModTime, now.Size, now.SHA256, s.SHA256, s.ModTime)
	}
	return nil
}

// FileWatch keeps a data file open for the length of a run and tells
// when it changes under the run. It watches the open file (the inode the
// HDF5 reader also has open): a truncation or an in-place rewrite, which
// the reader would see as zeros or other values, is caught; a replacement
// by rename (what `uhno datagen` does) leaves the open file, and the
// running job, intact, and is caught on resume instead, by Match. It
// implements train.DataGuard.
type FileWatch struct {
	path string
	f    *os.File
	want FileStamp
	mod  time.Time // the modification time when last verified
}

// WatchFile opens the file at path and stamps it.
func WatchFile(path string) (*FileWatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data: %w", err)
	}
	want, err := stampOf(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	want.Content = contentOf(path)
	return &FileWatch{path: path, f: f, want: want, mod: st.ModTime()}, nil
}

// Stamp returns the stamp taken when the watch started.
func (w *FileWatch) Stamp() FileStamp { return w.want }

// Check returns an error naming the file when it no longer matches its
// stamp. The quick check (full false: one fstat, microseconds, meant for
// every training step) compares the size, and re-hashes the samples only
// when the modification time moved; the full check (before every
// checkpoint) always re-hashes them.
func (w *FileWatch) Check(full bool) error {
	st, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if st.Size() != w.want.Size {
		return w.want.Match(w.path, FileStamp{Size: st.Size(), ModTime: st.ModTime().UTC().Format(time.RFC3339Nano)})
	}
	if !full && st.ModTime().Equal(w.mod) {
		return nil
	}
	now, err := stampOf(w.f, w.path)
	if err != nil {
		return err
	}
	if err := w.want.Match(w.path, now); err != nil {
		return err
	}
	w.mod = st.ModTime() // touched, same bytes
	return nil
}

// Close closes the watched file.
func (w *FileWatch) Close() error { return w.f.Close() }
