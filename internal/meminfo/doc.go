// Package meminfo reads the machine's memory from Linux's /proc/meminfo,
// for the commands' bounds: popsim's refusal of a run whose memory
// estimate the machine cannot hold, and the part of memory hugeheap may
// advise. It is not for the engine or simulator packages.
package meminfo
