// Storage for the frames a FrameWindow holds: one frame per slot, on the
// host (HostFrameStore, for the CPU paths) or on the device
// (DeviceFrameStore), reused from frame to frame and grown only when a
// frame is larger than any before. Private to the engine library, its tests
// and benchmarks: the window runners keep their frames in these.
#pragma once

#include <cudafilters/cuda_memory.h>
#include <cudafilters/frame_planes.h>

#include <vector>

namespace cudafilters {

// The planes a frame's samples occupy, in bytes: luma, and chroma as one
// interleaved plane (chroma_step 2) or two.
struct FrameBytes {
  ConstPlane planes[3];  // width in bytes, layout of one-byte samples
  int count = 0;

  explicit FrameBytes(const FramePlanes &f);
};

class HostFrameStore {
 public:
  // Copies src into `slot`.
  void store(int slot, const FramePlanes &src);
  // The copy in `slot`, as src was laid out (tightly packed rows).
  FramePlanes view(int slot) const { return slots_.at(slot).view; }

 private:
  struct Slot {
    std::vector<uint8_t> bytes[3];
    FramePlanes view;
  };
  std::vector<Slot> slots_;
};

class DeviceFrameStore {
 public:
  // Device memory for `slot` to hold frames laid out as `like`; the planes
  // that receive them, in bytes (as FrameBytes), and the slot's view is set
  // to such a frame.
  void prepare(int slot, const FramePlanes &like, Plane (&planes)[3], int *count);
  FramePlanes view(int slot) const { return slots_.at(slot).view; }

 private:
  struct Slot {
    DevicePlane planes[3];
    FramePlanes view;
  };
  std::vector<Slot> slots_;
};

// The same frame geometry as `like`, in planes starting at `bytes` (as
// FrameBytes lays them out): where a copy of `like` lands.
FramePlanes relocate(const FramePlanes &like, const Plane (&bytes)[3]);
FramePlanesOut relocate_out(const FramePlanes &like, const Plane (&bytes)[3]);

}  // namespace cudafilters
