// ReaderGrace: waits until no reader still uses what was there before the call. The
// workers' RCU (switch/datapath/worker_quiescence.h) implements it; ports/ asks through it, so that
// a port type's guard can wait for the workers without knowing them.
#pragma once

namespace hvswitch {

class ReaderGrace {
 public:
  // Any thread but a reader: returns once every reader has passed a quiescent point.
  virtual void WaitForReaders() = 0;

 protected:
  ~ReaderGrace() = default;
};

}  // namespace hvswitch
