// Views of one 8-bit image plane: a base pointer, a row stride in bytes and a
// size. They do not own memory and say nothing of where it lives; each user
// documents whether it expects host or device pointers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudafilters {

struct Plane {
  uint8_t *data = nullptr;
  size_t stride = 0;
  int width = 0;
  int height = 0;
};

struct ConstPlane {
  const uint8_t *data = nullptr;
  size_t stride = 0;
  int width = 0;
  int height = 0;

  ConstPlane() = default;
  ConstPlane(const uint8_t *d, size_t s, int w, int h) : data(d), stride(s), width(w), height(h) {}
  ConstPlane(const Plane &p) : data(p.data), stride(p.stride), width(p.width), height(p.height) {}
};

}  // namespace cudafilters
