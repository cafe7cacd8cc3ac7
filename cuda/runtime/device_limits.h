// What the device holds, and test hooks that make it seem to hold less, so
// that the paths the engines take on smaller devices run on any GPU. Private
// to the engine library and its tests: not installed.
//
// Cooperative launches: a grid barrier needs every block of the grid on the
// GPU at once. A device refuses a cooperative grid it cannot hold with
// cudaErrorCooperativeLaunchTooLarge: under MPS with an active-thread
// percentage, in a green context, or once another user of the kernel has
// changed what its blocks need; the engines then fall back to launches
// without a grid barrier.
//
// Shared memory: a block's static and dynamic shared memory together may
// not pass the device's opt-in limit, 64 KB on compute capability 7.5,
// about 99 KB on 8.6, 8.9 and 12.x, 163 KB on 8.0 and 227 KB on 9.0. The
// engines size what they ask for by shared_memory_per_block().
#pragma once

#include <cstddef>

namespace cudafilters {

// The most blocks a cooperative grid may have before the engines' launches
// refuse it as the device would; -1 (the start): no limit but the
// device's; 0 refuses every cooperative launch.
int cooperative_grid_cap();
// Changes that limit for the whole process, from the next launch on (tests
// of the fall-back paths, also mid-stream).
void set_cooperative_grid_cap(int blocks);

// The cooperative launches of frames refused so far in this process (by the
// device or by the limit above), which the engines then made without a grid
// barrier. Probes of what the device takes do not count.
unsigned cooperative_refusals();
void count_cooperative_refusal();

// The shared memory, static and dynamic together, that one block may use on
// the current device: its opt-in limit, or the cap below where that is
// smaller.
size_t shared_memory_per_block();
// Caps that for the whole process, for engines built from then on (tests
// that stand in for a smaller GPU); 0 (the start) leaves the device's.
size_t shared_memory_cap();
void set_shared_memory_cap(size_t bytes);

}  // namespace cudafilters
