#include "textflag.h"

// func prefetchAppend(m *model.Message, q *queue)
TEXT ·prefetchAppend(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ q+8(FP), BX
	PREFETCHT0 (BX)
	MOVQ m+0(FP), AX
	TESTQ AX, AX
	JZ done
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
done:
	RET
