// What every filter checks of what a caller gives it, before it touches a
// sample: parameters that are not valid, and planes that do not describe
// memory the filter can read and write, are refused with
// std::invalid_argument. Host code only: the planes may lie in host or
// device memory, none is dereferenced.
#pragma once

#include <cudafilters/plane.h>

#include <string>

namespace cudafilters {

// Throws with `error` (a *_params_error's reason) unless it is empty.
void check_params(const std::string &error);

// Throws unless `p` has data, at least one row of at least one sample,
// rows no longer than its stride, and a valid layout whose one-byte samples
// hold 8 bits. `what` names the plane in the message ("source").
void check_plane(ConstPlane p, const char *what);

// Throws unless src and dst pass check_plane and have the same size and
// layout.
void check_plane_pair(ConstPlane src, ConstPlane dst);

// check_plane_pair, and dst shares no byte with src: for filters that read
// src around each sample they write (they are not run in place).
void check_planes_apart(ConstPlane src, ConstPlane dst);

// check_plane_pair, and dst either is src (filtered in place, as a filter
// of each sample on its own can be) or shares no byte with it.
void check_pointwise_planes(ConstPlane src, ConstPlane dst);

// Whether a plane holds no sample.
inline bool plane_is_empty(ConstPlane p) { return p.width <= 0 || p.height <= 0; }

// The last byte of a plane that is not empty.
inline const uint8_t *plane_last_byte(ConstPlane p) {
  return p.data + static_cast<size_t>(p.height - 1) * p.stride + p.row_bytes() - 1;
}

// Whether two planes share a byte (the bytes between their first and last);
// empty planes share none.
bool planes_overlap(ConstPlane a, ConstPlane b);

}  // namespace cudafilters
