#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "ptdsim/planner/space.hpp"

using namespace ptdsim;
using namespace ptdsim::planner;
using test::degrees_only;

namespace {
std::uint64_t count(const core::Scenario& s, const SearchSpace& b) { return Space(s, b).count_candidates(); }
}  // namespace

TEST_CASE("planner: the iterator enumerates a hand-counted space", "[planner][space]") {
  const auto s = test::tiny(4);
  const Space space(s, degrees_only());
  // tp, pp, cp each in {1,2,4}; pipeline (1f1b,1) (gpipe,1) (zb-h1,1) (interleaved,2) (interleaved,3):
  // vpp divides 4, 5 or 6 layers (4 + 2 with the embedding and the loss counted) and leaves a pipeline
  // of pp >= 2 a layer or an end's slot per virtual stage (vpp <= 6/2); sp off/on: radix product
  // 3*3*3*1*5*1*1*1*2 = 270.
  CHECK(space.size() == 270);
  CHECK(space.pipeline().size() == 5);
  // (tp,pp,cp) with tp*pp*cp dividing 4: ten triples. Each gives (pp == 1 ? 1 : 5) schedules times
  // (tp == 1 ? 1 : 2) sp settings: 1 + [tp2]2 + [pp2]5 + [cp2]1 + [tp4]2 + [pp4]5 + [cp4]1
  // + [tp2 pp2]10 + [tp2 cp2]2 + [pp2 cp2]5 = 34.
  CHECK(space.count_candidates() == 34);
}

TEST_CASE("planner: every candidate is distinct and decodes its own index", "[planner][space]") {
  const auto s = test::tiny(8);
  const Space space(s, SearchSpace{});
  std::set<std::string> seen;
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    auto c = space.at(i);
    if (!c) continue;
    ++n;
    CHECK(c->index == i);
    CHECK(1LL * c->tp * c->pp * c->cp * c->dp == 8);
    CHECK((!c->sequence_parallel || c->tp > 1));
    CHECK((c->vpp > 1) == (c->schedule == core::Schedule::interleaved));
    seen.insert(label(*c));
  }
  CHECK(seen.size() == n);
  CHECK(!space.at(space.size()));
}

TEST_CASE("planner: for_each walks the candidates at() decodes, from any index", "[planner][space]") {
  const auto s = test::tiny(8);
  const Space space(s, SearchSpace{});
  // every start, including ones mid-digit and past the end, to the end and a short window
  for (std::uint64_t begin : {std::uint64_t{0}, std::uint64_t{1}, space.size() / 3, space.size() - 1, space.size()}) {
    for (std::uint64_t end : {space.size() + 5, begin + 7}) {
      std::vector<std::string> walked, decoded;
      space.for_each(begin, end, [&](const Candidate& c) { walked.push_back(std::to_string(c.index) + label(c)); });
      for (std::uint64_t i = begin; i < std::min(end, space.size()); ++i)
        if (const auto c = space.at(i)) decoded.push_back(std::to_string(c->index) + label(*c));
      CHECK(walked == decoded);
    }
  }
}

TEST_CASE("planner: bounds and pins shrink the space", "[planner][space]") {
  const auto s = test::tiny(4);
  SECTION("max_tp 2 drops the two tp4 candidates") {
    auto b = degrees_only();
    b.max_tp = 2;
    CHECK(count(s, b) == 32);
  }
  SECTION("pinning tp to 2 keeps [tp2]2 + [tp2 pp2]10 + [tp2 cp2]2") {
    auto b = degrees_only();
    b.tp = {2};
    CHECK(count(s, b) == 14);
  }
  SECTION("pinning dp to 1 keeps the six triples with tp*pp*cp = 4") {
    auto b = degrees_only();
    b.dp = {1};
    // [tp4]2 + [pp4]5 + [cp4]1 + [tp2 pp2]10 + [tp2 cp2]2 + [pp2 cp2]5 = 25
    CHECK(count(s, b) == 25);
  }
  SECTION("pinning the schedule to interleaved keeps pp > 1 with vpp 2 or 3") {
    auto b = degrees_only();
    b.schedule = {core::Schedule::interleaved};
    // pp>1 triples: pp2, pp4, tp2 pp2, pp2 cp2 -> sp factors 1+1+2+1 = 5, times 2 vpp values
    CHECK(count(s, b) == 10);
  }
  SECTION("the default micro-batches divide the global batch up to max_micro_batch; the free knobs multiply") {
    SearchSpace b;
    b.max_micro_batch = 3;
    // global batch 16: micro-batches 1 and 2 (3 divides no micro_batch*dp of 16)
    CHECK(Space(s, b).micro_batch() == std::vector<int>{1, 2});
    // 34 layouts x 2 micro-batches x 4 ZeRO stages x 3 recompute modes
    CHECK(count(s, b) == 34 * 2 * 4 * 3);
  }
  SECTION("a huge max_micro_batch lists the batch's divisors, not a million values") {
    SearchSpace b;
    b.max_micro_batch = 1000000;
    CHECK(Space(s, b).micro_batch() == std::vector<int>{1, 2, 4, 8, 16});
  }
  SECTION("a pinned value the structure forbids leaves no candidates") {
    auto b = degrees_only();
    b.tp = {3};
    CHECK(count(s, b) == 0);
  }
}

TEST_CASE("planner: expert parallelism is a dimension only for MoE models", "[planner][space]") {
  auto s = test::tiny(4);
  CHECK(Space(s, SearchSpace{}).ep() == std::vector<int>{1});
  s.model.moe = core::MoeSpec{8, 2, 1, 0};
  // divisors of the 8 experts that divide the 4 GPUs
  CHECK(Space(s, SearchSpace{}).ep() == std::vector<int>{1, 2, 4});
}

TEST_CASE("planner: apply writes the candidate into a scenario", "[planner][space]") {
  auto s = test::tiny(8);
  s.parallel.stage_layers = {2, 2};
  Candidate c;
  c.tp = 2;
  c.pp = 4;
  c.dp = 1;
  c.micro_batch = 3;
  c.recompute = core::Recompute::full;
  apply(c, s);
  CHECK(s.parallel.tp == 2);
  CHECK(s.parallel.pp == 4);
  CHECK(s.training.micro_batch == 3);
  CHECK(s.training.recompute == core::Recompute::full);
  CHECK(s.parallel.stage_layers.empty());  // two entries no longer match pp 4
}

TEST_CASE("planner: keys the user set pin their dimensions", "[planner][space]") {
  auto s = test::tiny(4);
  s.parallel.zero = 1;
  s.training.recompute = core::Recompute::full;
  SearchSpace b;
  b.max_micro_batch = 1;
  const auto pinned = pin_dimensions(s, {"parallel.zero", "training.recompute", "training.seq_len"}, b);
  CHECK(pinned == std::vector<std::string>{"parallel.zero", "training.recompute"});
  const Space space(s, b);
  CHECK(space.zero() == std::vector<int>{1});
  CHECK(space.recompute() == std::vector<core::Recompute>{core::Recompute::full});
  // 34 layouts (hand count above) x 1 micro-batch x 1 ZeRO stage x 1 recompute mode
  CHECK(space.count_candidates() == 34);
}

TEST_CASE("planner: locate finds every candidate from the scenario it writes", "[planner][space]") {
  const auto base = test::tiny(8);
  SearchSpace b;
  b.max_micro_batch = 2;
  const Space space(base, b);
  std::uint64_t found = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const auto c = space.at(i);
    if (!c) continue;
    core::Scenario s = base;
    apply(*c, s);
    const auto at = space.locate(s);
    INFO(label(*c));
    REQUIRE(at.candidate);
    CHECK(at.candidate->index == i);
    CHECK(at.why_not.empty());
    ++found;
  }
  CHECK(found == space.count_candidates());
}

TEST_CASE("planner: locate says which dimension a layout falls outside", "[planner][space]") {
  auto s = test::tiny(8);  // tp1 pp1 dp8 cp1, micro-batch 1, ZeRO-0, selective, 1F1B
  SearchSpace b;
  b.max_micro_batch = 2;
  SECTION("inside") { CHECK(Space(s, b).locate(s).candidate); }
  SECTION("a bound") {
    s.training.micro_batch = 4;
    s.parallel.dp = 8;
    CHECK(Space(s, b).locate(s).why_not == "micro_batch 4 is outside the space (micro_batch 1 2)");
  }
  SECTION("a pin") {
    b.zero = {1, 2};
    CHECK(Space(s, b).locate(s).why_not == "zero 0 is outside the space (zero 1 2)");
  }
  SECTION("a dp filter") {
    b.dp = {4};
    CHECK(Space(s, b).locate(s).why_not == "dp 8 is outside the space (dp 4)");
  }
  SECTION("another GPU count") {
    s.parallel.dp = 4;
    CHECK(Space(s, b).locate(s).why_not == "its degrees lay out 4 GPUs (tp*pp*cp*dp); the sweep lays out 8");
  }
  SECTION("sequence parallel with tp 1 is the candidate without it") {
    s.parallel.sequence_parallel = true;
    const auto at = Space(s, b).locate(s);
    REQUIRE(at.candidate);
    CHECK(!at.candidate->sequence_parallel);
  }
}

TEST_CASE("planner: divisors lists every divisor in increasing order", "[planner][space]") {
  CHECK(divisors(1) == std::vector<int>{1});
  CHECK(divisors(16) == std::vector<int>{1, 2, 4, 8, 16});  // a square: 4 once
  CHECK(divisors(1536) == std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
                                           384, 512, 768, 1536});  // 2^9 * 3: 10 * 2 = 20 divisors
  CHECK(divisors(97) == std::vector<int>{1, 97});  // a prime
  // 4194304 = 2^22: 23 divisors, the last the number itself
  const auto d = divisors(1 << 22);
  CHECK(d.size() == 23);
  CHECK(d.back() == 1 << 22);
}

TEST_CASE("planner: ZeRO-3 layouts spanning nodes get a hybrid-sharding twin", "[planner][space][zero3]") {
  // 32 GPUs, 8 a node, ZeRO-3 only, one micro-batch and recompute mode: every layout whose dp*cp
  // (= 32 / (tp*pp)) spans more than a node, 16 or 32 ranks, also runs sharded within a node
  // (shard_ranks 8) and replicated across; the others have no twin.
  const auto s = test::tiny(32);
  auto b = test::degrees_only();
  b.zero = {3};
  const Space space(s, b);
  CHECK(space.shard_ranks() == std::vector<int>{0, 8});
  std::uint64_t full = 0, hybrid = 0, spanning = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const auto c = space.at(i);
    if (!c) continue;
    (c->shard_ranks > 0 ? hybrid : full) += 1;
    if (c->shard_ranks == 0 && c->dp * c->cp > 8) ++spanning;
    if (c->shard_ranks > 0) {
      CHECK(c->shard_ranks == 8);
      CHECK(c->dp * c->cp % 8 == 0);
      CHECK(label(*c).find(" zero3 hsdp8 ") != std::string::npos);
      core::Scenario x = s;
      apply(*c, x);
      CHECK(x.parallel.sharding.shard_ranks == 8);
      CHECK(space.locate(x).candidate->index == i);
    }
  }
  CHECK(hybrid == spanning);
  CHECK(hybrid > 0);
  SECTION("pinned to full sharding, the twins are gone") {
    b.shard_ranks = {0};
    CHECK(Space(s, b).count_candidates() == full);
  }
  SECTION("without ZeRO-3 in the space there is nothing to twin") {
    b.zero = {0, 1, 2};
    CHECK(Space(s, b).shard_ranks() == std::vector<int>{0});
  }
}

TEST_CASE("planner: a space with no candidate says which option emptied it and by what rule", "[planner][space]") {
  const auto s = test::tiny(8);  // 8 GPUs, 4 heads, 4 layers, no experts
  SECTION("every dimension has values: nothing to say") {
    const Space space(s, SearchSpace{});
    CHECK(space.empty_option().empty());
    CHECK(space.count_candidates() > 0);
  }
  SECTION("tp 3 divides neither the 8 GPUs nor the 4 heads; tp 8 the GPUs but not the heads") {
    SearchSpace b;
    b.tp = Choice{3, 8};
    const Space space(s, b);
    CHECK(space.tp().empty());
    CHECK(space.count_candidates() == 0);
    CHECK(space.why_no_candidate() == "--tp: no value of 3,8 divides both the 8 GPUs and the model's 4 attention heads");
  }
  SECTION("a range, on the pipeline; the first empty dimension is named") {
    SearchSpace b;
    b.pp.ranges = {{3, 3}, {5, 7}};
    b.zero = Choice{5};
    const Space space(s, b);
    CHECK(space.why_no_candidate() == "--pp: no value of 3..3,5..7 divides the 8 GPUs");
  }
  SECTION("ep on a model without experts, and a ZeRO stage that does not exist") {
    SearchSpace b;
    b.ep = Choice{2};
    CHECK(Space(s, b).why_no_candidate() == "--ep: no value of 2 is 1, the only degree of a model without experts");
    SearchSpace z;
    z.zero = Choice{4};
    CHECK(Space(s, z).why_no_candidate() == "--zero: no value of 4 is a ZeRO stage, 0 to 3");
  }
  SECTION("every dimension has values, but no combination lays out the GPUs") {
    SearchSpace b;
    b.tp = Choice{4};
    b.pp = Choice{4};
    const Space space(s, b);
    CHECK(space.empty_option().empty());
    CHECK(space.count_candidates() == 0);
    CHECK(space.why_no_candidate() == "no combination of the degrees lays out the 8 GPUs (tp*pp*cp*dp)");
  }
}

TEST_CASE("planner: degree lists are checked, deduplicated and searched in order", "[planner][space][choice]") {
  // issue 39: `--tp 0` gave 0 candidates with exit 0; a degree is positive, a ZeRO stage from 0
  CHECK_FALSE(parse_choice("0"));
  CHECK_FALSE(parse_choice("0..4"));
  CHECK(parse_choice("0", 0));
  CHECK_FALSE(parse_choice("4,-1"));
  CHECK_FALSE(parse_choice("8..4"));
  // normal form: sorted, without repeats, ranges merged where they overlap or touch
  const auto c = parse_choice("8,4,8,4,1..3,2..5,10..12,7");
  REQUIRE(c);
  CHECK(c->values == std::vector<int>{4, 7, 8});
  CHECK(c->ranges == std::vector<std::pair<int, int>>{{1, 5}, {10, 12}});
  for (int v : {1, 5, 7, 10, 12}) CHECK(c->admits(v));
  for (int v : {6, 9, 13, 0}) CHECK_FALSE(c->admits(v));
  // at most kMaxChoiceItems items (65536): a list is typed or generated, never a million values
  std::string many = "1";
  for (std::size_t i = 1; i < kMaxChoiceItems; ++i) many += ",1";
  CHECK(parse_choice(many));
  CHECK_FALSE(parse_choice(many + ",1"));
}

TEST_CASE("planner: a long micro-batch list costs its admitted divisors", "[planner][space][choice]") {
  // before: every listed value above the batch was kept, and values not dividing the batch were
  // enumerated only to be rejected layout by layout (20,000 values: over 60 s on the default scenario)
  auto s = test::tiny(8);  // global batch 16
  SearchSpace b;
  std::string list = "1";
  for (int v = 2; v <= 20000; ++v) {
    list += ',';
    list += std::to_string(v);
  }
  b.micro_batch = *parse_choice(list);
  CHECK(Space(s, b).micro_batch() == std::vector<int>{1, 2, 4, 8, 16});
  b.micro_batch = *parse_choice("3,5,7");
  const Space none(s, b);
  CHECK(none.micro_batch().empty());
  CHECK(none.why_no_candidate() == "--micro-batch: no value of 3,5,7 divides the global batch 16");
}

TEST_CASE("planner: --search offload adds the offload modes each ZeRO stage can run", "[planner][space][offload]") {
  auto s = test::tiny(4);
  SearchSpace b = degrees_only();
  b.zero = {};  // every ZeRO stage
  REQUIRE(search_switches({"offload"}, b).empty());
  // without a host the space keeps the scenario's mode (the sweep's caller refuses the search)
  CHECK(Space(s, b).offload().size() == 1);
  s.hardware.host.link_Bps = 64e9;
  s.hardware.host.memory_bytes = 2048 * core::kGiB;
  s.hardware.host.memory_Bps = 614.4e9;
  const Space space(s, b);
  REQUIRE(space.offload().size() == 3);
  // per layout, ZeRO 0: none; ZeRO 1 and 2: none, optimizer; ZeRO 3: all three. So the space holds
  // (1 + 2 + 2 + 3) / 4 = 2 times the layouts of the same space without the search
  SearchSpace plain = degrees_only();
  plain.zero = {};
  CHECK(space.count_candidates() == 2 * Space(s, plain).count_candidates());
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    auto c = space.at(i);
    if (!c) continue;
    CHECK((c->offload == core::Offload::none || c->zero >= 1));
    CHECK((c->offload != core::Offload::optimizer_params || c->zero == 3));
    seen.insert(label(*c));  // the label names the mode: every candidate still distinct
    core::Scenario t = s;
    apply(*c, t);
    CHECK(t.training.offload == c->offload);
  }
  CHECK(seen.size() == space.count_candidates());
}
