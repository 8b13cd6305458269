package bufview

// Stack is a last-in first-out collection of integers with a fixed capacity.
type Stack struct {
	items []int
	limit int
}

// NewStack makes an empty stack holding at most limit items.
func NewStack(limit int) *Stack {
	return &Stack{items: make([]int, 0, limit), limit: limit}
}

// Push adds x on top; it reports false when the stack is full.
func (s *Stack) Push(x int) bool {
	if len(s.items) == s.limit {
		return false
	}
	s.items = append(s.items, x)
	return true
}

// Pop removes the top item; ok is false on an empty stack.
func (s *Stack) Pop() (x int, ok bool) {
	n := len(s.items)
	if n == 0 {
		return 0, false
	}
	x = s.items[n-1]
	s.items = s.items[:n-1]
	return x, true
}

// Peek returns the top item without removing it.
func (s *Stack) Peek() (int, bool) {
	if len(s.items) == 0 {
		return 0, false
	}
	return s.items[len(s.items)-1], true
}

// Depth tells how many items are stacked.
func (s *Stack) Depth() int { return len(s.items) }

// Sum adds all stacked items, bottom to top.
func (s *Stack) Sum() (total int) {
	for _, x := range s.items {
		total += x
	}
	return total
}
