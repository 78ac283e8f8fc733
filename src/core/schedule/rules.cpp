#include "ptdsim/core/schedule.hpp"

namespace ptdsim::core {

const ScheduleRules& schedule_rules(Schedule s) {
  switch (s) {  // no default: a Schedule without a row is a -Wswitch error
    case Schedule::gpipe: return kGpipe;
    case Schedule::one_f_one_b: return kOneFOneB;
    case Schedule::interleaved: return kInterleaved;
    case Schedule::zb_h1: return kZbH1;
  }
  return kOneFOneB;  // unreachable for a valid enum value
}

}  // namespace ptdsim::core
