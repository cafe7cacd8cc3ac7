// Which frames a filter that reads windows of frames (temporal denoising)
// holds, and when it filters each. With radius r, frame n is filtered once
// frame n + r has arrived, or once the stream ends (draining), from the
// frames n - r .. n + r held since the last reset: near the start and end
// of a stream the window is clipped to the frames that exist. Frames are
// stored in 2 r + 1 slots that are reused; the storage itself (host or
// device) belongs to the user, who indexes it by slot. Private to the engine
// library and its tests: the window runners decide with it, and say what it
// decides (their ready() and waiting()).
#pragma once

#include <array>
#include <deque>
#include <vector>

namespace cudafilters {

class FrameWindow {
 public:
  static constexpr int kMaxRadius = 3;

  struct Window {
    std::array<int, 2 * kMaxRadius + 1> slots{};  // in time order
    int count = 0;
    int center = 0;  // position of the frame filtered
  };

  // Forgets every frame; windows of 2 radius + 1 frames from now on.
  void reset(int radius);
  int radius() const { return radius_; }
  int slot_count() const { return 2 * radius_ + 1; }

  // A new frame: the slot to store it in.
  int push();
  // Forgets the frame of the last push(), not filtered yet, whose copy into
  // its slot failed: the window is as before that push.
  void drop_newest();
  // Whether a frame waits to be filtered, and whether it can be now
  // (draining: no more frames will come before a reset).
  bool waiting() const { return next_ < int(held_.size()); }
  bool ready(bool draining) const;
  // The window of the next frame to filter (std::logic_error if none waits).
  Window next() const;
  // The next frame was filtered (or is dropped): frames no later window
  // needs are released. std::logic_error if none waits.
  void pop();

 private:
  int radius_ = 0;
  std::deque<int> held_;  // slots of the frames held, oldest first
  int next_ = 0;          // position in held_ of the next frame to filter
  std::vector<int> free_{0};  // as after reset(0)
};

}  // namespace cudafilters
