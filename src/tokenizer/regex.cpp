// A small backtracking regex engine for the Oniguruma patterns in tokenizer.json files.
//
// Supported: literals and escapes, ., classes [...] with ranges and negation, \s \S \d \D
// \w \W \p{..} \P{..} (general categories), groups (...), (?:...), (?i:...), (?i),
// lookahead (?=...) (?!...), alternation, quantifiers ? * + {n} {n,} {n,m} (greedy and
// lazy), anchors ^ $ \A \z. Anything else is an Unsupported load error naming it.
//
// It compiles to a tiny VM run depth-first with an explicit stack (leftmost-first, like
// Perl/Oniguruma), so long inputs cannot overflow the call stack. Repetition of something
// that can match empty is refused at compile time, which keeps every match attempt finite.

#include "tokenizer/regex.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/unicode.hpp"

namespace warden::tokenizer::detail {

namespace {

[[noreturn]] void unsupported(std::string_view re, std::string_view what) {
  throw Error(ErrorKind::Unsupported,
              fmt::format("tokenizer.json: regex '{}': {} is not supported", re, what));
}

using CatMask = std::uint32_t;  // bit per utf8proc category

constexpr CatMask bit(int cat) {
  return CatMask{1} << cat;
}
constexpr CatMask kL = bit(UTF8PROC_CATEGORY_LU) | bit(UTF8PROC_CATEGORY_LL) | bit(UTF8PROC_CATEGORY_LT) |
                       bit(UTF8PROC_CATEGORY_LM) | bit(UTF8PROC_CATEGORY_LO);
constexpr CatMask kM = bit(UTF8PROC_CATEGORY_MN) | bit(UTF8PROC_CATEGORY_MC) | bit(UTF8PROC_CATEGORY_ME);
constexpr CatMask kN = bit(UTF8PROC_CATEGORY_ND) | bit(UTF8PROC_CATEGORY_NL) | bit(UTF8PROC_CATEGORY_NO);
constexpr CatMask kP = bit(UTF8PROC_CATEGORY_PC) | bit(UTF8PROC_CATEGORY_PD) | bit(UTF8PROC_CATEGORY_PS) |
                       bit(UTF8PROC_CATEGORY_PE) | bit(UTF8PROC_CATEGORY_PI) | bit(UTF8PROC_CATEGORY_PF) |
                       bit(UTF8PROC_CATEGORY_PO);
constexpr CatMask kS = bit(UTF8PROC_CATEGORY_SM) | bit(UTF8PROC_CATEGORY_SC) | bit(UTF8PROC_CATEGORY_SK) |
                       bit(UTF8PROC_CATEGORY_SO);
constexpr CatMask kZ = bit(UTF8PROC_CATEGORY_ZS) | bit(UTF8PROC_CATEGORY_ZL) | bit(UTF8PROC_CATEGORY_ZP);
constexpr CatMask kC = bit(UTF8PROC_CATEGORY_CC) | bit(UTF8PROC_CATEGORY_CF) | bit(UTF8PROC_CATEGORY_CS) |
                       bit(UTF8PROC_CATEGORY_CO) | bit(UTF8PROC_CATEGORY_CN);
constexpr CatMask kWordCats = kL | kM | bit(UTF8PROC_CATEGORY_ND) | bit(UTF8PROC_CATEGORY_PC);

CatMask property_mask(std::string_view name, std::string_view re) {
  struct P {
    std::string_view name;
    CatMask mask;
  };
  static const P props[] = {
      {"L", kL},
      {"Letter", kL},
      {"Lu", bit(UTF8PROC_CATEGORY_LU)},
      {"Ll", bit(UTF8PROC_CATEGORY_LL)},
      {"Lt", bit(UTF8PROC_CATEGORY_LT)},
      {"Lm", bit(UTF8PROC_CATEGORY_LM)},
      {"Lo", bit(UTF8PROC_CATEGORY_LO)},
      {"M", kM},
      {"Mark", kM},
      {"Mn", bit(UTF8PROC_CATEGORY_MN)},
      {"Mc", bit(UTF8PROC_CATEGORY_MC)},
      {"Me", bit(UTF8PROC_CATEGORY_ME)},
      {"N", kN},
      {"Number", kN},
      {"Nd", bit(UTF8PROC_CATEGORY_ND)},
      {"Nl", bit(UTF8PROC_CATEGORY_NL)},
      {"No", bit(UTF8PROC_CATEGORY_NO)},
      {"P", kP},
      {"Punctuation", kP},
      {"Pc", bit(UTF8PROC_CATEGORY_PC)},
      {"Pd", bit(UTF8PROC_CATEGORY_PD)},
      {"Ps", bit(UTF8PROC_CATEGORY_PS)},
      {"Pe", bit(UTF8PROC_CATEGORY_PE)},
      {"Pi", bit(UTF8PROC_CATEGORY_PI)},
      {"Pf", bit(UTF8PROC_CATEGORY_PF)},
      {"Po", bit(UTF8PROC_CATEGORY_PO)},
      {"S", kS},
      {"Symbol", kS},
      {"Sm", bit(UTF8PROC_CATEGORY_SM)},
      {"Sc", bit(UTF8PROC_CATEGORY_SC)},
      {"Sk", bit(UTF8PROC_CATEGORY_SK)},
      {"So", bit(UTF8PROC_CATEGORY_SO)},
      {"Z", kZ},
      {"Separator", kZ},
      {"Zs", bit(UTF8PROC_CATEGORY_ZS)},
      {"Zl", bit(UTF8PROC_CATEGORY_ZL)},
      {"Zp", bit(UTF8PROC_CATEGORY_ZP)},
      {"C", kC},
      {"Other", kC},
      {"Cc", bit(UTF8PROC_CATEGORY_CC)},
      {"Cf", bit(UTF8PROC_CATEGORY_CF)},
      {"Co", bit(UTF8PROC_CATEGORY_CO)},
      {"Cn", bit(UTF8PROC_CATEGORY_CN)},
  };
  for (const auto& p : props) {
    if (p.name == name) return p.mask;
  }
  unsupported(re, fmt::format("the property \\p{{{}}}", name));
}

struct ClassItem {
  enum Kind : std::uint8_t { Range, Cats, Space, NotSpace, NotCats } kind;
  char32_t lo = 0, hi = 0;
  CatMask mask = 0;
};

struct CharClass {
  std::vector<ClassItem> items;
  bool negated = false;
  bool ci = false;

  [[nodiscard]] bool raw_contains(char32_t c) const {
    for (const auto& it : items) {
      switch (it.kind) {
        case ClassItem::Range:
          if (c >= it.lo && c <= it.hi) return true;
          break;
        case ClassItem::Cats:
          if ((bit(utf8proc_category(static_cast<utf8proc_int32_t>(c))) & it.mask) != 0) return true;
          break;
        case ClassItem::NotCats:
          if ((bit(utf8proc_category(static_cast<utf8proc_int32_t>(c))) & it.mask) == 0) return true;
          break;
        case ClassItem::Space:
          if (uni::is_whitespace(c)) return true;
          break;
        case ClassItem::NotSpace:
          if (!uni::is_whitespace(c)) return true;
          break;
      }
    }
    return false;
  }
  [[nodiscard]] bool contains(char32_t c) const {
    bool in = raw_contains(c);
    if (!in && ci) {
      char32_t buf[3];
      if (uni::to_lower(c, buf) == 1 && buf[0] != c) in = raw_contains(buf[0]);
      if (!in && uni::to_upper(c, buf) == 1 && buf[0] != c) in = raw_contains(buf[0]);
    }
    return in != negated;
  }
};

enum class Op : std::uint8_t { Char, Class, Any, Split, Jmp, Match, Look, Bol, Eol, Start, End };

struct Inst {
  Op op;
  bool flag = false;  // Char: case-insensitive; Look: negated
  std::uint32_t x = 0, y = 0;
  char32_t c = 0;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
struct Node {
  enum Kind { Char, Class, Any, Seq, Alt, Repeat, Look, Bol, Eol, Start, End } kind;
  char32_t c = 0;
  bool ci = false;
  std::uint32_t cls = 0;
  std::vector<NodePtr> kids;
  std::uint32_t min = 0, max = 0;  // Repeat; max == kInf for unbounded
  bool greedy = true;
  bool negate = false;  // Look
};
constexpr std::uint32_t kInf = std::numeric_limits<std::uint32_t>::max();

char32_t fold(char32_t c) {
  char32_t buf[3];
  return uni::to_lower(c, buf) == 1 ? buf[0] : c;
}

class Regex final : public Pattern {
 public:
  explicit Regex(std::string_view re) : re_(re) {
    std::u32string cps = utf8::decode(re);
    src_ = cps;
    pos_ = 0;
    NodePtr root = parse_alt(false);
    if (pos_ != src_.size()) unsupported(re_, "an unbalanced ')'");
    progs_.emplace_back();
    compile_into(*root, 0);
    progs_[0].push_back(Inst{Op::Match});
  }

  void find_all(std::string_view text, std::vector<std::uint32_t>& out) const override {
    // A budget of VM steps: the patterns tokenizer files use run in linear time, but a
    // pathological pattern (say (a|a)*b) could backtrack exponentially. Past the budget we
    // refuse the input instead of hanging a worker (steps per byte scale with the program).
    t_budget = 8 * (text.size() + 16) * std::max<std::size_t>(progs_[0].size(), 64);
    t_stack.clear();  // drop whatever an earlier refused input left behind
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = 0;
      if (run(0, text, pos, end) && end > pos) {
        out.push_back(static_cast<std::uint32_t>(pos));
        out.push_back(static_cast<std::uint32_t>(end));
        pos = end;
      } else {
        utf8::next(text, pos);
      }
    }
  }

 private:
  // ---- parser ----
  [[nodiscard]] bool at_end() const { return pos_ >= src_.size(); }
  char32_t peek() const { return src_[pos_]; }
  bool eat(char32_t c) {
    if (!at_end() && src_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  NodePtr make(Node::Kind k) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    return n;
  }

  NodePtr parse_alt(bool ci) {
    auto alt = make(Node::Alt);
    alt->kids.push_back(parse_seq(ci));
    while (eat('|')) alt->kids.push_back(parse_seq(ci));
    if (alt->kids.size() == 1) return std::move(alt->kids[0]);
    return alt;
  }

  NodePtr parse_seq(bool ci) {
    auto seq = make(Node::Seq);
    while (!at_end() && peek() != '|' && peek() != ')') {
      // An inline flag group "(?i)" turns case-insensitivity on for the rest of the sequence.
      if (src_.compare(pos_, 4, U"(?i)") == 0) {
        pos_ += 4;
        ci = true;
        continue;
      }
      NodePtr atom = parse_atom(ci);
      atom = parse_quant(std::move(atom));
      seq->kids.push_back(std::move(atom));
    }
    return seq;
  }

  std::uint32_t parse_int() {
    std::uint32_t v = 0;
    bool any = false;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<std::uint32_t>(peek() - '0');
      if (v > 10000) unsupported(re_, "a repetition count above 10000");
      ++pos_;
      any = true;
    }
    if (!any) unsupported(re_, "a malformed {n,m}");
    return v;
  }

  NodePtr parse_quant(NodePtr atom) {
    while (!at_end()) {
      std::uint32_t mn = 0, mx = 0;
      const char32_t c = peek();
      if (c == '?') {
        mn = 0;
        mx = 1;
      } else if (c == '*') {
        mn = 0;
        mx = kInf;
      } else if (c == '+') {
        mn = 1;
        mx = kInf;
      } else if (c == '{' && pos_ + 1 < src_.size() && src_[pos_ + 1] >= '0' && src_[pos_ + 1] <= '9') {
        ++pos_;
        mn = parse_int();
        mx = mn;
        if (eat(',')) mx = (!at_end() && peek() == '}') ? kInf : parse_int();
        if (at_end() || peek() != '}') unsupported(re_, "a malformed {n,m}");
        if (mx < mn) unsupported(re_, "{n,m} with m < n");
      } else {
        break;
      }
      ++pos_;
      bool greedy = true;
      if (eat('?')) {
        greedy = false;
      } else if (eat('+')) {
        unsupported(re_, "a possessive quantifier");
      }
      if (mx == kInf && nullable(*atom))
        unsupported(re_, "unbounded repetition of something that can match empty");
      auto rep = make(Node::Repeat);
      rep->min = mn;
      rep->max = mx;
      rep->greedy = greedy;
      rep->kids.push_back(std::move(atom));
      atom = std::move(rep);
    }
    return atom;
  }

  static bool nullable(const Node& n) {
    switch (n.kind) {
      case Node::Char:
      case Node::Class:
      case Node::Any:
        return false;
      case Node::Seq:
        for (const auto& k : n.kids) {
          if (!nullable(*k)) return false;
        }
        return true;
      case Node::Alt:
        for (const auto& k : n.kids) {
          if (nullable(*k)) return true;
        }
        return false;
      case Node::Repeat:
        return n.min == 0 || nullable(*n.kids[0]);
      default:
        return true;
    }
  }

  NodePtr parse_atom(bool ci) {
    const char32_t c = src_[pos_++];
    switch (c) {
      case '(': {
        NodePtr inner;
        if (eat('?')) {
          if (eat(':')) {
            inner = parse_alt(ci);
          } else if (src_.compare(pos_, 2, U"i:") == 0) {
            pos_ += 2;
            inner = parse_alt(true);
          } else if (eat('=') || (!at_end() && peek() == '!')) {
            const bool neg = eat('!');
            auto look = make(Node::Look);
            look->negate = neg;
            look->kids.push_back(parse_alt(ci));
            inner = std::move(look);
          } else {
            unsupported(re_, "this group syntax (lookbehind, named group or flag)");
          }
        } else {
          inner = parse_alt(ci);
        }
        if (!eat(')')) unsupported(re_, "an unclosed '('");
        return inner;
      }
      case '[':
        return parse_class(ci);
      case '.':
        return make(Node::Any);
      case '^':
        return make(Node::Bol);
      case '$':
        return make(Node::Eol);
      case '\\':
        return parse_escape(ci, false, nullptr);
      case ')':
        unsupported(re_, "an unbalanced ')'");
      default: {
        auto n = make(Node::Char);
        n->c = c;
        n->ci = ci;
        return n;
      }
    }
  }

  // After a backslash. Inside a class, appends to `cls` and returns null.
  NodePtr parse_escape(bool ci, bool in_class, CharClass* cls) {
    if (at_end()) unsupported(re_, "a trailing backslash");
    const char32_t e = src_[pos_++];
    ClassItem item{};
    bool is_class = true;
    char32_t lit = 0;
    switch (e) {
      case 's':
        item.kind = ClassItem::Space;
        break;
      case 'S':
        item.kind = ClassItem::NotSpace;
        break;
      case 'd':
        item.kind = ClassItem::Cats;
        item.mask = bit(UTF8PROC_CATEGORY_ND);
        break;
      case 'D':
        item.kind = ClassItem::NotCats;
        item.mask = bit(UTF8PROC_CATEGORY_ND);
        break;
      case 'w':
        item.kind = ClassItem::Cats;
        item.mask = kWordCats;
        break;
      case 'W':
        item.kind = ClassItem::NotCats;
        item.mask = kWordCats;
        break;
      case 'p':
      case 'P': {
        bool neg = e == 'P';
        if (!eat('{')) unsupported(re_, "\\p without braces");
        if (eat('^')) neg = !neg;
        std::string name;
        while (!at_end() && peek() != '}') utf8::append(name, src_[pos_++]);
        if (!eat('}')) unsupported(re_, "an unclosed \\p{");
        item.kind = neg ? ClassItem::NotCats : ClassItem::Cats;
        item.mask = property_mask(name, re_);
        break;
      }
      case 'A':
      case 'z':
      case 'Z':
        if (in_class) unsupported(re_, "an anchor inside a class");
        return make(e == 'A' ? Node::Start : Node::End);
      case 'b':
      case 'B':
        unsupported(re_, "word boundaries");
      case 'n':
        is_class = false;
        lit = '\n';
        break;
      case 'r':
        is_class = false;
        lit = '\r';
        break;
      case 't':
        is_class = false;
        lit = '\t';
        break;
      case 'f':
        is_class = false;
        lit = '\f';
        break;
      case 'v':
        is_class = false;
        lit = '\v';
        break;
      case '0':
        is_class = false;
        lit = 0;
        break;
      case 'x':
      case 'u': {
        is_class = false;
        const bool braced = eat('{');
        const std::size_t digits = braced ? 8 : (e == 'x' ? 2 : 4);
        std::uint32_t v = 0;
        std::size_t k = 0;
        for (; k < digits && !at_end(); ++k) {
          const char32_t h = peek();
          int d = -1;
          if (h >= '0' && h <= '9') d = static_cast<int>(h - '0');
          if (h >= 'a' && h <= 'f') d = static_cast<int>(h - 'a' + 10);
          if (h >= 'A' && h <= 'F') d = static_cast<int>(h - 'A' + 10);
          if (d < 0) break;
          v = v * 16 + static_cast<std::uint32_t>(d);
          ++pos_;
        }
        if (k == 0 || (braced && !eat('}')) || v > 0x10FFFF)
          unsupported(re_, "a malformed \\x or \\u escape");
        lit = v;
        break;
      }
      default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9')) {
          unsupported(re_, fmt::format("the escape \\{}", static_cast<char>(e)));
        }
        is_class = false;
        lit = e;  // an escaped punctuation character stands for itself
        break;
    }
    if (in_class) {
      if (is_class) {
        cls->items.push_back(item);
      } else {
        cls->items.push_back(ClassItem{ClassItem::Range, lit, lit, 0});
      }
      return nullptr;
    }
    if (is_class) {
      CharClass cc;
      cc.ci = ci;
      cc.items.push_back(item);
      return class_node(std::move(cc));
    }
    auto n = make(Node::Char);
    n->c = lit;
    n->ci = ci;
    return n;
  }

  NodePtr class_node(CharClass cc) {
    classes_.push_back(std::move(cc));
    auto n = make(Node::Class);
    n->cls = static_cast<std::uint32_t>(classes_.size() - 1);
    return n;
  }

  NodePtr parse_class(bool ci) {
    CharClass cc;
    cc.ci = ci;
    if (eat('^')) cc.negated = true;
    bool first = true;
    while (true) {
      if (at_end()) unsupported(re_, "an unclosed '['");
      char32_t c = src_[pos_];
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[') unsupported(re_, "nested classes");
      ++pos_;
      if (c == '\\') {
        const std::size_t before = cc.items.size();
        parse_escape(ci, true, &cc);
        // A single-character escape may start a range.
        if (cc.items.size() == before + 1 && cc.items.back().kind == ClassItem::Range && !at_end() &&
            peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
          const char32_t lo = cc.items.back().lo;
          cc.items.pop_back();
          ++pos_;
          char32_t hi = src_[pos_++];
          if (hi == '\\') {
            CharClass tmp;
            parse_escape(ci, true, &tmp);
            if (tmp.items.size() != 1 || tmp.items[0].kind != ClassItem::Range)
              unsupported(re_, "a class range");
            hi = tmp.items[0].lo;
          }
          cc.items.push_back(ClassItem{ClassItem::Range, lo, hi, 0});
        }
        continue;
      }
      char32_t hi = c;
      if (!at_end() && peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
        ++pos_;
        hi = src_[pos_++];
        if (hi == '\\') {
          CharClass tmp;
          parse_escape(ci, true, &tmp);
          if (tmp.items.size() != 1 || tmp.items[0].kind != ClassItem::Range)
            unsupported(re_, "a class range");
          hi = tmp.items[0].lo;
        }
      }
      if (hi < c) unsupported(re_, "a reversed class range");
      cc.items.push_back(ClassItem{ClassItem::Range, c, hi, 0});
    }
    return class_node(std::move(cc));
  }

  // ---- compiler ----
  std::uint32_t here(std::size_t prog) const { return static_cast<std::uint32_t>(progs_[prog].size()); }
  std::uint32_t emit(std::size_t prog, Inst inst) {
    // Nested counted repetitions multiply ({3,27}{3,58}{3,227}...): cap the program size.
    if (progs_[prog].size() >= kMaxProgram)
      unsupported(re_, "a pattern this large (nested counted repetitions)");
    progs_[prog].push_back(inst);
    return here(prog) - 1;
  }

  void compile_into(const Node& n, std::size_t prog) {
    switch (n.kind) {
      case Node::Char:
        emit(prog, Inst{Op::Char, n.ci, 0, 0, n.ci ? fold(n.c) : n.c});
        return;
      case Node::Class:
        emit(prog, Inst{Op::Class, false, n.cls});
        return;
      case Node::Any:
        emit(prog, Inst{Op::Any});
        return;
      case Node::Bol:
        emit(prog, Inst{Op::Bol});
        return;
      case Node::Eol:
        emit(prog, Inst{Op::Eol});
        return;
      case Node::Start:
        emit(prog, Inst{Op::Start});
        return;
      case Node::End:
        emit(prog, Inst{Op::End});
        return;
      case Node::Seq:
        for (const auto& k : n.kids) compile_into(*k, prog);
        return;
      case Node::Alt: {
        std::vector<std::uint32_t> jumps;
        for (std::size_t i = 0; i < n.kids.size(); ++i) {
          if (i + 1 < n.kids.size()) {
            const std::uint32_t split = emit(prog, Inst{Op::Split});
            progs_[prog][split].x = here(prog);
            compile_into(*n.kids[i], prog);
            jumps.push_back(emit(prog, Inst{Op::Jmp}));
            progs_[prog][split].y = here(prog);
          } else {
            compile_into(*n.kids[i], prog);
          }
        }
        for (const auto j : jumps) progs_[prog][j].x = here(prog);
        return;
      }
      case Node::Repeat: {
        const Node& body = *n.kids[0];
        for (std::uint32_t i = 0; i < n.min; ++i) compile_into(body, prog);
        if (n.max == kInf) {
          const std::uint32_t loop = emit(prog, Inst{Op::Split});
          compile_into(body, prog);
          emit(prog, Inst{Op::Jmp, false, loop});
          set_split(prog, loop, loop + 1, here(prog), n.greedy);
        } else {
          std::vector<std::uint32_t> splits;
          for (std::uint32_t i = n.min; i < n.max; ++i) {
            splits.push_back(emit(prog, Inst{Op::Split}));
            compile_into(body, prog);
          }
          for (const auto s : splits) set_split(prog, s, s + 1, here(prog), n.greedy);
        }
        return;
      }
      case Node::Look: {
        const std::size_t sub = progs_.size();
        progs_.emplace_back();
        compile_into(*n.kids[0], sub);
        progs_[sub].push_back(Inst{Op::Match});
        emit(prog, Inst{Op::Look, n.negate, static_cast<std::uint32_t>(sub)});
        return;
      }
    }
  }

  void set_split(std::size_t prog, std::uint32_t at, std::uint32_t body, std::uint32_t out, bool greedy) {
    progs_[prog][at].x = greedy ? body : out;
    progs_[prog][at].y = greedy ? out : body;
  }

  // ---- matcher ----
  bool run(std::size_t prog, std::string_view text, std::size_t start, std::size_t& end) const {
    auto& stack = t_stack;
    const std::size_t base = stack.size();
    stack.emplace_back(0U, start);
    const auto& code = progs_[prog];
    bool found = false;
    while (stack.size() > base && !found) {
      auto [pc, pos] = stack.back();
      stack.pop_back();
      if (t_budget-- == 0) {
        stack.resize(base);
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("tokenizer regex '{}' backtracks too much on this input", re_));
      }
      while (true) {
        const Inst& in = code[pc];
        bool ok = true;
        switch (in.op) {
          case Op::Char: {
            if (pos >= text.size()) {
              ok = false;
              break;
            }
            std::size_t p = pos;
            char32_t c = utf8::next(text, p);
            if (in.flag) c = fold(c);
            ok = c == in.c;
            if (ok) {
              pos = p;
              ++pc;
            }
            break;
          }
          case Op::Class: {
            if (pos >= text.size()) {
              ok = false;
              break;
            }
            std::size_t p = pos;
            const char32_t c = utf8::next(text, p);
            ok = classes_[in.x].contains(c);
            if (ok) {
              pos = p;
              ++pc;
            }
            break;
          }
          case Op::Any: {
            if (pos >= text.size() || text[pos] == '\n') {
              ok = false;
              break;
            }
            utf8::next(text, pos);
            ++pc;
            break;
          }
          case Op::Split:
            stack.emplace_back(in.y, pos);
            pc = in.x;
            break;
          case Op::Jmp:
            pc = in.x;
            break;
          case Op::Match:
            end = pos;
            found = true;
            break;
          case Op::Look: {
            std::size_t dummy = 0;
            const bool m = run(in.x, text, pos, dummy);
            ok = m != in.flag;
            if (ok) ++pc;
            break;
          }
          case Op::Bol:
            ok = pos == 0 || text[pos - 1] == '\n';
            if (ok) ++pc;
            break;
          case Op::Eol:
            ok = pos == text.size() || text[pos] == '\n';
            if (ok) ++pc;
            break;
          case Op::Start:
            ok = pos == 0;
            if (ok) ++pc;
            break;
          case Op::End:
            ok = pos == text.size();
            if (ok) ++pc;
            break;
        }
        if (!ok || found) break;
      }
    }
    stack.resize(base);
    return found;
  }

  static constexpr std::size_t kMaxProgram = 5000;
  std::string re_;
  std::u32string src_;
  std::size_t pos_ = 0;
  std::vector<CharClass> classes_;
  std::vector<std::vector<Inst>> progs_;
  static thread_local std::vector<std::pair<std::uint32_t, std::size_t>> t_stack;
  static thread_local std::size_t t_budget;
};
thread_local std::size_t Regex::t_budget = 0;
thread_local std::vector<std::pair<std::uint32_t, std::size_t>> Regex::t_stack;

class StringPattern final : public Pattern {
 public:
  explicit StringPattern(std::string s) : s_(std::move(s)) {}
  void find_all(std::string_view text, std::vector<std::uint32_t>& out) const override {
    if (s_.empty()) return;
    std::size_t pos = 0;
    while ((pos = text.find(s_, pos)) != std::string_view::npos) {
      out.push_back(static_cast<std::uint32_t>(pos));
      out.push_back(static_cast<std::uint32_t>(pos + s_.size()));
      pos += s_.size();
    }
  }

 private:
  std::string s_;
};

}  // namespace

std::unique_ptr<Pattern> make_string_pattern(std::string literal) {
  return std::make_unique<StringPattern>(std::move(literal));
}

std::unique_ptr<Pattern> make_regex_pattern(std::string_view regex) {
  return std::make_unique<Regex>(regex);
}

}  // namespace warden::tokenizer::detail
