// Package bufview holds small views and containers used by the examples.
//
// This file has comments only: minhashdup drops it as too small to compare,
// instead of pairing it with every other comment-only file.
package bufview
