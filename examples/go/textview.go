// Package bufview provides read-only views over strings.
package bufview

// This file mirrors reader.go for string input.

import (
	"errors"
	"io"
)

// ErrNegativeOffset is returned when a seek would move before the start.
var ErrNegativeOffset = errors.New("bufview: negative offset")

// ByteView reads from a byte slice and remembers its position.
type ByteView struct {
	data string
	pos  int64
	prev int
}

// NewByteView returns a view reading from b.
func NewByteView(b string) *ByteView { return &ByteView{data: b, prev: -1} }

// Len is the number of unread bytes.
func (v *ByteView) Len() int {
	if v.pos >= int64(len(v.data)) {
		return 0
	}
	return int(int64(len(v.data)) - v.pos)
}

// Size is the length of the underlying slice.
func (v *ByteView) Size() int64 { return int64(len(v.data)) }

// Read copies unread bytes into p.
func (v *ByteView) Read(p []byte) (n int, err error) {
	if v.pos >= int64(len(v.data)) {
		return 0, io.EOF
	}
	v.prev = -1
	n = copy(p, v.data[v.pos:])
	if n == 0 {
		return 0, io.ErrShortBuffer
	}
	v.pos += int64(n)
	return n, nil
}

// ReadByte returns the next byte.
func (v *ByteView) ReadByte() (byte, error) {
	v.prev = -1
	if v.pos >= int64(len(v.data)) {
		return 0, io.EOF
	}
	b := v.data[v.pos]
	v.pos++
	return b, nil
}

// UnreadByte steps back one byte.
func (v *ByteView) UnreadByte() error {
	if v.pos <= 0 {
		return errors.New("bufview: at beginning of slice")
	}
	v.prev = -1
	v.pos--
	return nil
}

// Seek sets the position for the next read.
func (v *ByteView) Seek(offset int64, whence int) (int64, error) {
	v.prev = -1
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = v.pos + offset
	case io.SeekEnd:
		abs = int64(len(v.data)) + offset
	default:
		return 0, errors.New("bufview: invalid whence")
	}
	if abs < 0 {
		return 0, ErrNegativeOffset
	}
	v.pos = abs
	return abs, nil
}

// Reset makes the view read from the string b.
func (v *ByteView) Reset(b string) { *v = ByteView{data: b, prev: -1} }
