// Package atomicfile replaces files whole: a reader of the path sees the
// old content or the new, never a half-written file. The bytes go to a
// hidden temporary file, which is renamed over the path once complete.
// It is the one writer the result, the generator's JSON and markers, the
// start gate, the redacted logs and the fetched profiles go through.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// File is a file being written in place of a path: its writes go to a
// temporary file, which Commit renames over the path and Abort removes.
type File struct {
	*os.File
	path string
	done bool
}

// Create begins the replacement of path. The temporary file is made in
// dir, or beside path when dir is empty; a rename only works within one
// filesystem, so a dir elsewhere makes Commit fail with the rename's
// error (the caller may then write beside path instead).
func Create(path, dir string) (*File, error) {
	if dir == "" {
		dir = filepath.Dir(path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Commit closes the temporary file, gives it perm (CreateTemp makes
// 0600) and renames it over the path. On any error the temporary file is
// removed and the path is left as it was. Call Sync first where the bytes
// must survive a crash, not only a reader.
func (f *File) Commit(perm os.FileMode) error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	f.done = true
	tmp := f.Name()
	err := f.Close()
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Abort closes and removes the temporary file; the path is left as it
// was. It is a no-op after Commit, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// Write replaces path with data, mode 0644, through a temporary file
// beside it.
func Write(path string, data []byte) error { return write(path, "", data, false) }

// WriteSynced is Write with the temporary file made in dir (see Create;
// "": beside path) and synced before the rename: the bytes survive a
// crash, not only a reader. The result document goes through it.
func WriteSynced(path, dir string, data []byte) error { return write(path, dir, data, true) }

func write(path, dir string, data []byte, sync bool) error {
	f, err := Create(path, dir)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.File.Write(data); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return f.Commit(0o644)
}
