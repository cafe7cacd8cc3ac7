// Cooperative launches (a grid barrier needs every block of the grid on the
// GPU at once) and a test hook that makes the device seem to hold fewer
// blocks. A device refuses a cooperative grid it cannot hold with
// cudaErrorCooperativeLaunchTooLarge: under MPS with an active-thread
// percentage, in a green context, or once another user of the kernel has
// changed what its blocks need; the engines then fall back to launches
// without a grid barrier. Private to the engine library and its tests: not
// installed.
#pragma once

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

}  // namespace cudafilters
