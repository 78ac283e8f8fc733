#pragma once
#include <string>
#include <vector>

// A simulated training step as bars on a time axis, per pipeline stage and stream: what the
// evaluate page draws. Neutral (no engine types) so that the report writers read it without the engine's headers. Filled by
// sim::timeline() from a run step graph (docs/report.md "Timeline").
namespace ptdsim::core {

struct TimelineSpan {
  int stage = 0;
  std::string stream;  // the simulator's stream name: "compute", "tp", "cp", "ep", "dp", "dp-gather", "pp-send"
  // What the bar is: the simulator's task kind ("F", "B", "W", "optimizer", "TP", "PP p2p",
  // "DP reduce", ...), "bubble" (the stage idle inside the pipeline phase) or "summary" (several
  // tasks of one stream drawn as one bar; see `tasks`).
  std::string kind;
  std::string label;  // "F mb3 L0-5", "bubble", "412 tasks (mb 2-509)"
  double start_s = 0;
  double dur_s = 0;
  bool critical = false;  // on the step's critical path (Engine::critical_path)
  int tasks = 1;          // simulator tasks this bar stands for (0 for a bubble)
  double busy_s = 0;      // for a summary: the time its tasks ran (<= dur_s); else dur_s
};

struct Timeline {
  double step_s = 0;
  double pipeline_end_s = 0;  // when the last pipeline pass of any stage ends (bubbles end here)
  int stages = 0;
  int microbatches = 0;
  std::size_t tasks = 0;                 // tasks the step simulated
  std::vector<std::string> streams;      // the streams that carry a span, in drawing order
  // The task kinds that carry a span (not "bubble" or "summary"), in the simulator's order of its
  // kinds: the order the page gives their colours in, so a kind keeps its colour across pages.
  std::vector<std::string> kinds;
  std::vector<TimelineSpan> spans;       // by stage, then stream, then time
  double min_bubble_s = 0;               // idle gaps shorter than this are not drawn
  // How the spans were chosen, in words: "" when every task is drawn; otherwise which micro-batches
  // are drawn task by task and how the rest were summarised.
  std::string sampling;
};

}  // namespace ptdsim::core
