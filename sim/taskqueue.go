package sim

import "popsim/clock"

// taskQueue is the scheduler's queue of pending tasks, in the order
// taskHeap defines (time, tie-break, sequence number). A run's pending
// tasks are few, and most are due within milliseconds; the rest wait
// seconds (a client's request timeout, which its answer nearly always
// cancels first, and the fault schedule's steps). So the queue keeps the
// tasks due before a horizon in a taskHeap (near) and the later ones in
// a plain list (far): scheduling or cancelling a far task is an append
// or a swap with the list's last, and the heap the scheduler takes from
// holds a third of the tasks it otherwise would. When near runs empty
// the horizon moves to window past far's earliest task, and the far
// tasks due before it move to near.
//
// The tasks due before the horizon wait in front (frontRun) if, when
// filed, fewer than frontReach of front's tasks preceded them, and in near
// otherwise. A task's idx says where it waits: inFront (somewhere in
// front), its position in near, farIdx(its position in far), or -1 once
// dispatched or cancelled.
type taskQueue struct {
	front   frontRun // tasks due before horizon, filed among the run's first
	near    taskHeap // the other tasks due before horizon
	far     []*task  // every task due at or after horizon, in no order
	horizon clock.Time
	window  clock.Duration
}

// farWindow is how far past the earliest far task the horizon moves: the
// span of the tasks near holds, long against the delays of a request's
// trip, a consumption or a retry (microseconds to tens of milliseconds)
// and short against a request's timeout (seconds).
const farWindow = clock.Second

func newTaskQueue(start clock.Time, window clock.Duration) taskQueue {
	return taskQueue{horizon: start.Add(window), window: window}
}

// farIdx is the idx of a task at position i of far (-2, -3, ...), and
// its own inverse.
func farIdx(i int) int { return -2 - i }

func (q *taskQueue) len() int { return q.front.n + q.near.len() + len(q.far) }

// queued reports whether the task waits in a scheduler's queue.
func (e *task) queued() bool { return e.idx != -1 }

// push adds e.
func (q *taskQueue) push(e *task) {
	if e.at < q.horizon {
		q.pushNear(e)
		return
	}
	q.pushFar(e)
}

// pushNear adds e, due before the horizon: to front if fewer than
// frontReach of its tasks precede e (handing front's latest to near if
// front is full), else to near.
func (q *taskQueue) pushNear(e *task) {
	if x := q.front.file(e); x != nil {
		q.near.push(x)
	}
}

// pushFar adds e, due at or after the horizon, to far.
func (q *taskQueue) pushFar(e *task) {
	e.idx = farIdx(len(q.far))
	q.far = append(q.far, e)
}

// peek returns the earliest task without taking it out, or nil when the
// queue is empty.
func (q *taskQueue) peek() *task {
	if e := q.front.earlier(q.near.first()); e != nil || len(q.far) == 0 {
		return e
	}
	q.advance()
	return q.peek()
}

// advance moves the horizon of an empty front and near to window past
// far's earliest task, and the far tasks due before it to front and near.
func (q *taskQueue) advance() {
	first := q.far[0].at
	for _, e := range q.far[1:] {
		first = min(first, e.at)
	}
	q.horizon = first.Add(q.window)
	kept := q.far[:0]
	for _, e := range q.far {
		if e.at < q.horizon {
			q.pushNear(e)
		} else {
			e.idx = farIdx(len(kept))
			kept = append(kept, e)
		}
	}
	clear(q.far[len(kept):])
	q.far = kept
}

// pop takes out e, the earliest task, which peek returned: front's first
// or near's, as its idx says.
func (q *taskQueue) pop(e *task) {
	if e.idx == inFront {
		q.front.pop(e)
		return
	}
	q.near.pop(e)
}

// remove takes out the waiting task e.
func (q *taskQueue) remove(e *task) {
	if e.idx == inFront {
		q.front.remove(e)
		return
	}
	if e.idx >= 0 {
		q.near.remove(e)
		return
	}
	i, n := farIdx(e.idx), len(q.far)-1
	last := q.far[n]
	q.far[i], last.idx = last, e.idx
	q.far = q.far[:n] // the slot past the end keeps its task, as the heap's do (taskHeap.close)
	e.idx = -1
}
