#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "run.hpp"

// MoE layouts from the command line (issue 36): parallel.etp, the dispatcher and the load keys in
// evaluate's report, and `sweep --ep --etp` lists.
using cli_testing::ptdsim;

namespace {

const std::string kMoe = "tests/data/good/moe-mixtral-64.yaml";

nlohmann::json evaluate(const std::string& sets) {
  const auto r = ptdsim("evaluate " + kMoe + " " + sets + " --format json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("cli: an MoE report shows the experts' layout, memory, dispatch and layer time", "[cli][moe]") {
  const auto j = evaluate("");
  // etp unset follows tp 4; the experts' data parallel is tp*cp*dp / (etp*ep) = 4*1*8 / (4*8) = 1
  CHECK(j["parallel"]["etp"] == 4);
  CHECK(j["parallel"]["expert_dp"] == 1);
  CHECK(j["training"]["moe"]["dispatcher"] == "alltoall");
  // ep 8 at stride tp 4: two of its ranks a node, across nodes
  CHECK(j["communication"]["dispatch_scope"] == "inter");
  CHECK(j["communication"]["dispatch_ranks_per_node"] == 2);
  // 16 MoE layers a stage, one expert of 3 * 4096 * 14336 / 4 parameters each
  CHECK(j["memory"]["expert_params"].get<double>() == Approx(16 * 3.0 * 4096 * 14336 / 4).epsilon(1e-12));
  CHECK(j["memory"]["expert_gib"].get<double>() > 0);
  for (const char* k : {"router_s", "permute_s", "experts_s", "dispatch_s"}) CHECK(j["moe_layer"][k].get<double>() > 0);

  SECTION("etp 1 folds ep inside the node and shards expert states over 4 ranks") {
    const auto f = evaluate("--set parallel.etp=1");
    CHECK(f["parallel"]["etp"] == 1);
    CHECK(f["parallel"]["expert_dp"] == 4);
    CHECK(f["communication"]["dispatch_scope"] == "intra");
    // whole experts (x4 the parameters of etp 4)
    CHECK(f["memory"]["expert_params"].get<double>() == Approx(16 * 3.0 * 4096 * 14336).epsilon(1e-12));
  }
  SECTION("a busier expert slows the experts and the dispatch") {
    const auto b = evaluate("--set training.moe.load_imbalance=1.5");
    CHECK(b["training"]["moe"]["busiest_expert"].get<double>() == 1.5);
    CHECK(b["moe_layer"]["experts_s"].get<double>() > j["moe_layer"]["experts_s"].get<double>());
    CHECK(b["moe_layer"]["dispatch_s"].get<double>() ==
          Approx(1.5 * j["moe_layer"]["dispatch_s"].get<double>()).epsilon(1e-9));
    CHECK(b["time"]["step_s"].get<double>() > j["time"]["step_s"].get<double>());
  }
  SECTION("the table says the experts' memory and the MoE layer's parts") {
    const auto t = ptdsim("evaluate " + kMoe);
    REQUIRE(t.status == 0);
    CHECK(t.out.find("experts on a GPU of stage 0: 0.705 B parameters") != std::string::npos);  // 16 x 44,040,192
    CHECK(t.out.find("(etp 4, ep 8, expert data parallel 1)") != std::string::npos);
    CHECK(t.out.find("  an MoE layer (forward + backward): router ") != std::string::npos);
    CHECK(t.out.find("(alltoall, ") != std::string::npos);
  }
  SECTION("a dense model's report has no expert fields") {
    const auto r = ptdsim("evaluate scenarios/default.yaml --format json");
    REQUIRE(r.status == 0);
    const auto d = nlohmann::json::parse(r.out);
    CHECK_FALSE(d["parallel"].contains("etp"));
    CHECK_FALSE(d.contains("moe_layer"));
  }
}

TEST_CASE("cli: sweep --ep and --etp lists", "[cli][moe]") {
  const auto r = ptdsim("sweep " + kMoe + " --ep 4,8 --etp 1,2 --pp 1,2 --top 5 --format json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(!j["results"].empty());
  for (const auto& x : j["results"]) {
    const int ep = x["parallel"]["ep"], etp = x["parallel"]["etp"];
    CHECK((ep == 4 || ep == 8));
    CHECK((etp == 1 || etp == 2));
    // Megatron-Core's rule: etp*ep divides tp*cp*dp
    const int block = x["parallel"]["tp"].get<int>() * x["parallel"]["cp"].get<int>() * x["parallel"]["dp"].get<int>();
    CHECK(block % (etp * ep) == 0);
  }
  SECTION("an --etp value nothing can take leaves no candidate, and the sweep says which rule") {
    const auto none = ptdsim("sweep " + kMoe + " --etp 3");
    CHECK(none.status == 0);  // as for --tp 3: an empty ranking, not a usage error
    CHECK(none.out.find("no candidate: --etp: no value of 3 divides both the 64 GPUs and the experts' ffn_hidden 14336") !=
          std::string::npos);
  }
  SECTION("a sweep one rule empties names the rule: the fused grouped MLP under --etp 2") {
    const std::string sets =
        " --set hardware=gb200-nvl72 --set training.precision=fp8 --set training.fp8_recipe=mxfp8"
        " --set parallel.etp=1 --set training.fusion.grouped_mlp=fused --etp 2";
    const auto t = ptdsim("sweep " + kMoe + sets);
    REQUIRE(t.status == 0);
    CHECK(t.out.find("no layout fits") != std::string::npos);
    CHECK(t.out.find("  unsupported (") != std::string::npos);
    CHECK(t.out.find("training.fusion.grouped_mlp fused (TransformerEngine's MXFP8 grouped MLP) needs the experts "
                     "unsplit (etp 1)") != std::string::npos);
    const auto js = ptdsim("sweep " + kMoe + sets + " --format json");
    REQUIRE(js.status == 0);
    const auto j = nlohmann::json::parse(js.out);
    CHECK(j["rejected_example"]["unsupported"]["key"] == "training.fusion.grouped_mlp");
    CHECK(j["rejected"]["unsupported"].get<long long>() > 0);
    CHECK(j["results"].empty());
    // the first rejected candidate in enumeration order (112,764 unsupported over many chunks),
    // whatever the thread count
    const auto one = ptdsim("sweep " + kMoe + sets + " --format json --threads 1");
    REQUIRE(one.status == 0);
    CHECK(nlohmann::json::parse(one.out)["rejected_example"] == j["rejected_example"]);
  }
  SECTION("the scenario's layout (etp unset: tp's 4) is found among --etp 1,4") {
    const auto t = ptdsim("sweep " + kMoe + " --etp 1,4 --ep 8 --pp 2 --tp 4 --top 3");
    REQUIRE(t.status == 0);
    CHECK(t.out.find("scenario's layout: tp4 pp2 dp8 cp1 ep8 vpp1 mb1 zero1 selective sp 1f1b: rank") != std::string::npos);
    CHECK(t.out.find("  ep etp vpp") != std::string::npos);  // the experts' degrees as columns
  }
}

TEST_CASE("cli: EP overlap hides the paired share of the dispatch, where Megatron-Core runs it", "[cli][moe]") {
  // pp 2 without interleaving: Megatron-Core refuses the overlap there, so the key changes nothing
  const auto plain = evaluate("");
  const auto refused = evaluate("--set training.overlap.ep=true");
  CHECK(refused["training"]["overlap"]["ep"] == true);
  CHECK(refused["time"]["step_s"].get<double>() == plain["time"]["step_s"].get<double>());
  // vpp 2: dp = 64 / (4 * 2) = 8, m = 256 / 8 = 32 micro-batches, 64 passes a rank. The combined
  // 1F1B leaves w = 2(p - r - 1) + (v - 1)p + 1 unpaired: 5 on stage 0, 3 on stage 1, so 5/64 and
  // 3/64 of each stage's EP stay serial; the rest hides behind the passes (an MoE layer's experts
  // outlast its dispatch here), so the exposed EP falls to between 3/64 and 5/64 of what it was
  const std::string interleaved = "--set parallel.vpp=2 --set parallel.schedule=interleaved";
  const auto serial = evaluate(interleaved);
  const auto overlapped = evaluate(interleaved + " --set training.overlap.ep=true");
  const double before = serial["time"]["exposed_comm_s"]["ep"].get<double>();
  const double after = overlapped["time"]["exposed_comm_s"]["ep"].get<double>();
  REQUIRE(before > 0);
  CHECK(after / before >= 3.0 / 64 * 0.9);
  CHECK(after / before <= 5.0 / 64 * 1.1);
  CHECK(overlapped["time"]["step_s"].get<double>() < serial["time"]["step_s"].get<double>());
  // the table says which it was
  CHECK(ptdsim("evaluate " + kMoe).out.find("; EP overlap off)") != std::string::npos);
  CHECK(ptdsim("evaluate " + kMoe + " --set training.overlap.ep=true").out.find(
            "; EP overlap asked for but not run at this layout)") != std::string::npos);
  CHECK(ptdsim("evaluate " + kMoe + " " + interleaved + " --set training.overlap.ep=true").out.find("; EP overlap on)") !=
        std::string::npos);
}
