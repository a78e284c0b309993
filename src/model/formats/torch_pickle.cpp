#include "model/formats/torch_pickle.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::model::formats {

namespace {

// Nesting deeper than a state dict ever needs (its deepest value is a tensor's size tuple
// inside the rebuild arguments inside the dict): bounds the C++ recursion that destroys values.
constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxDims = 16;

enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor, Mark };
enum class Callable { OrderedDict, RebuildTensor, RebuildParameter, StorageType };

struct Value;
using Items = std::vector<Value>;
struct DictData {
  std::vector<std::pair<Value, Value>> items;
};
struct StorageRef {
  std::string key;
  Dtype dtype = Dtype::F32;
  std::uint64_t elements = 0;
};

// One pickled value. Strings and tuples are shared (immutable; the memo hands out copies
// cheaply); lists and dicts are mutable, and the memo never hands them out again (see BINGET),
// so no container is ever reachable twice and no cycle can form.
struct Value {
  Kind kind = Kind::None;
  std::int64_t integer = 0;
  double number = 0;
  std::shared_ptr<const std::string> text;
  std::shared_ptr<Items> items;
  std::shared_ptr<DictData> dict;
  Callable callable = Callable::OrderedDict;
  Dtype storage_type = Dtype::F32;
  std::shared_ptr<const StorageRef> storage;
  std::shared_ptr<const PickledTensor> tensor;
  int depth = 0;
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "a bool";
    case Kind::Int:
      return "an int";
    case Kind::Float:
      return "a float";
    case Kind::String:
      return "a string";
    case Kind::Tuple:
      return "a tuple";
    case Kind::List:
      return "a list";
    case Kind::Dict:
      return "a dict";
    case Kind::Global:
      return "a global";
    case Kind::Storage:
      return "a storage";
    case Kind::Tensor:
      return "a tensor";
    case Kind::Mark:
      return "a mark";
  }
  return "?";
}

struct StorageClass {
  std::string_view name;
  Dtype dtype;
};
constexpr std::array<StorageClass, 10> kStorages{{{"FloatStorage", Dtype::F32},
                                                  {"DoubleStorage", Dtype::F64},
                                                  {"HalfStorage", Dtype::F16},
                                                  {"BFloat16Storage", Dtype::BF16},
                                                  {"LongStorage", Dtype::I64},
                                                  {"IntStorage", Dtype::I32},
                                                  {"ShortStorage", Dtype::I16},
                                                  {"CharStorage", Dtype::I8},
                                                  {"ByteStorage", Dtype::U8},
                                                  {"BoolStorage", Dtype::BOOL}}};

class Unpickler {
 public:
  Unpickler(std::span<const std::byte> in, std::string_view file) : in_(in), file_(file) {}

  std::vector<PickledTensor> run() {
    while (true) {
      if (pos_ >= in_.size()) throw fail("the pickle ends without STOP");
      const auto op = static_cast<unsigned char>(in_[pos_]);
      op_at_ = pos_++;
      if (op == '.') break;  // STOP
      step(op);
    }
    if (stack_.size() != 1) throw fail("STOP with more than one value on the stack");
    return state_dict(stack_.back());
  }

 private:
  [[nodiscard]] Error fail(std::string_view what) const {
    return Error(ErrorKind::CorruptFile, fmt::format("{}: pickle byte {}: {}", file_, op_at_, what));
  }

  std::span<const std::byte> take(std::uint64_t n) {
    if (n > in_.size() - pos_) throw fail("the pickle is truncated");
    const auto s = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  std::uint64_t le(std::size_t n) {
    const auto b = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    return v;
  }
  std::string line() {
    std::string s;
    while (true) {
      const auto c = static_cast<char>(take(1)[0]);
      if (c == '\n') return s;
      s.push_back(c);
    }
  }

  void push(Value v) {
    if (v.depth > kMaxDepth) throw fail("values nest too deeply for a state dict");
    stack_.push_back(std::move(v));
  }
  Value pop() {
    if (stack_.empty() || stack_.back().kind == Kind::Mark) throw fail("the stack is empty");
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  Value& top() {
    if (stack_.empty() || stack_.back().kind == Kind::Mark) throw fail("the stack is empty");
    return stack_.back();
  }
  // The values above the topmost mark, which is removed.
  Items pop_mark() {
    std::size_t m = stack_.size();
    while (m > 0 && stack_[m - 1].kind != Kind::Mark) --m;
    if (m == 0) throw fail("no mark on the stack");
    Items out(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
              std::make_move_iterator(stack_.end()));
    stack_.resize(m - 1);
    return out;
  }

  static Value integer(std::int64_t v) {
    Value x;
    x.kind = Kind::Int;
    x.integer = v;
    return x;
  }
  static Value string(std::string s) {
    Value x;
    x.kind = Kind::String;
    x.text = std::make_shared<const std::string>(std::move(s));
    return x;
  }
  Value tuple(Items items) {
    Value x;
    x.kind = Kind::Tuple;
    for (const Value& v : items) x.depth = std::max(x.depth, v.depth + 1);
    x.items = std::make_shared<Items>(std::move(items));
    return x;
  }
  // Puts `v` into the container on the stack `c` (not inside any other container, see Value).
  void grow(Value& c, const Value& v) {
    c.depth = std::max(c.depth, v.depth + 1);
    if (c.depth > kMaxDepth) throw fail("values nest too deeply for a state dict");
  }

  Value global(std::string_view module, std::string_view name) {
    Value g;
    g.kind = Kind::Global;
    if (module == "collections" && name == "OrderedDict") {
      g.callable = Callable::OrderedDict;
    } else if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
      g.callable = Callable::RebuildTensor;
    } else if (module == "torch._utils" && name == "_rebuild_parameter") {
      g.callable = Callable::RebuildParameter;
    } else {
      for (const StorageClass& s : kStorages) {
        if (module == "torch" && name == s.name) {
          g.callable = Callable::StorageType;
          g.storage_type = s.dtype;
          return g;
        }
      }
      throw fail(
          fmt::format("refusing the global {}.{}: a state dict needs only collections.OrderedDict, "
                      "torch._utils._rebuild_tensor_v2 / _rebuild_parameter and torch's storage "
                      "types, and nothing in the file is executed",
                      module, name));
    }
    return g;
  }

  std::int64_t as_int(const Value& v, std::string_view what) const {
    if (v.kind != Kind::Int && v.kind != Kind::Bool) {
      throw fail(fmt::format("{} is {}, not an int", what, kind_name(v.kind)));
    }
    return v.integer;
  }
  const std::string& as_string(const Value& v, std::string_view what) const {
    if (v.kind != Kind::String) throw fail(fmt::format("{} is {}, not a string", what, kind_name(v.kind)));
    return *v.text;
  }
  const Items& as_tuple(const Value& v, std::string_view what) const {
    if (v.kind != Kind::Tuple) throw fail(fmt::format("{} is {}, not a tuple", what, kind_name(v.kind)));
    return *v.items;
  }

  // ('storage', torch.<Type>Storage, key, location, elements): the archive's data/<key>.
  Value persistent(const Value& pid) {
    const Items& t = as_tuple(pid, "a persistent id");
    if (t.size() != 5 || as_string(t[0], "the persistent id's tag") != "storage") {
      throw fail("a persistent id other than ('storage', type, key, location, size)");
    }
    if (t[1].kind != Kind::Global || t[1].callable != Callable::StorageType) {
      throw fail("a storage whose type is not one of torch's storage classes");
    }
    auto ref = std::make_shared<StorageRef>();
    ref->dtype = t[1].storage_type;
    ref->key = as_string(t[2], "the storage key");
    (void)as_string(t[3], "the storage location");
    const std::int64_t n = as_int(t[4], "the storage size");
    if (n < 0) throw fail("a negative storage size");
    ref->elements = static_cast<std::uint64_t>(n);
    Value v;
    v.kind = Kind::Storage;
    v.storage = std::move(ref);
    v.depth = 1;
    return v;
  }

  std::vector<std::int64_t> ints(const Value& v, std::string_view what) {
    const Items& t = as_tuple(v, what);
    if (t.size() > kMaxDims) throw fail(fmt::format("{} has {} dimensions", what, t.size()));
    std::vector<std::int64_t> out;
    for (const Value& x : t) out.push_back(as_int(x, what));
    return out;
  }

  Value reduce(const Value& callable, const Value& args_value) {
    if (callable.kind != Kind::Global) {
      throw fail(fmt::format("REDUCE on {}, not a known global", kind_name(callable.kind)));
    }
    const Items& args = as_tuple(args_value, "REDUCE's arguments");
    Value out;
    switch (callable.callable) {
      case Callable::OrderedDict:
        if (!args.empty()) throw fail("OrderedDict built from arguments");
        out.kind = Kind::Dict;
        out.dict = std::make_shared<DictData>();
        return out;
      case Callable::RebuildParameter:
        // (tensor, requires_grad, backward_hooks): the tensor itself.
        if (args.size() != 3 || args[0].kind != Kind::Tensor) throw fail("_rebuild_parameter's arguments");
        return args[0];
      case Callable::RebuildTensor: {
        // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
        if ((args.size() != 6 && args.size() != 7) || args[0].kind != Kind::Storage) {
          throw fail("_rebuild_tensor_v2's arguments");
        }
        auto t = std::make_shared<PickledTensor>();
        t->storage_key = args[0].storage->key;
        t->dtype = args[0].storage->dtype;
        t->storage_elements = args[0].storage->elements;
        const std::int64_t offset = as_int(args[1], "a tensor's storage offset");
        if (offset < 0) throw fail("a negative storage offset");
        t->offset = static_cast<std::uint64_t>(offset);
        const auto size = ints(args[2], "a tensor's size");
        t->stride = ints(args[3], "a tensor's stride");
        if (size.size() != t->stride.size()) throw fail("a tensor's size and stride differ in length");
        for (const std::int64_t d : size) {
          if (d < 0) throw fail("a negative tensor dimension");
          t->shape.push_back(static_cast<std::size_t>(d));
        }
        out.kind = Kind::Tensor;
        out.tensor = std::move(t);
        out.depth = 1;
        return out;
      }
      case Callable::StorageType:
        break;
    }
    throw fail("a storage type called directly");
  }

  void step(unsigned char op) {
    switch (op) {
      case 0x80:  // PROTO
        if (const auto v = le(1); v < 2 || v > 5) throw fail(fmt::format("pickle protocol {}", v));
        return;
      case 0x95:  // FRAME
        (void)le(8);
        return;
      case '(': {  // MARK
        Value mark;
        mark.kind = Kind::Mark;
        stack_.push_back(std::move(mark));
        return;
      }
      case ')':  // EMPTY_TUPLE
        push(tuple({}));
        return;
      case 0x85:    // TUPLE1
      case 0x86:    // TUPLE2
      case 0x87: {  // TUPLE3
        const std::size_t n = op - 0x84U;
        Items items(n);
        for (std::size_t i = n; i-- > 0;) items[i] = pop();
        push(tuple(std::move(items)));
        return;
      }
      case 't':  // TUPLE
        push(tuple(pop_mark()));
        return;
      case ']': {  // EMPTY_LIST
        Value v;
        v.kind = Kind::List;
        v.items = std::make_shared<Items>();
        push(std::move(v));
        return;
      }
      case '}': {  // EMPTY_DICT
        Value v;
        v.kind = Kind::Dict;
        v.dict = std::make_shared<DictData>();
        push(std::move(v));
        return;
      }
      case 'a': {  // APPEND
        Value v = pop();
        Value& list = top();
        if (list.kind != Kind::List) throw fail("APPEND to " + std::string(kind_name(list.kind)));
        grow(list, v);
        list.items->push_back(std::move(v));
        return;
      }
      case 'e': {  // APPENDS
        Items vs = pop_mark();
        Value& list = top();
        if (list.kind != Kind::List) throw fail("APPENDS to " + std::string(kind_name(list.kind)));
        for (Value& v : vs) {
          grow(list, v);
          list.items->push_back(std::move(v));
        }
        return;
      }
      case 's': {  // SETITEM
        Value v = pop();
        Value k = pop();
        set_items(top(), {std::move(k), std::move(v)});
        return;
      }
      case 'u': {  // SETITEMS
        Items kv = pop_mark();
        if (kv.size() % 2 != 0) throw fail("SETITEMS with an odd number of values");
        set_items(top(), std::move(kv));
        return;
      }
      case 'N':  // NONE
        push(Value{});
        return;
      case 0x88:    // NEWTRUE
      case 0x89: {  // NEWFALSE
        Value v = integer(op == 0x88 ? 1 : 0);
        v.kind = Kind::Bool;
        push(std::move(v));
        return;
      }
      case 'J':  // BININT
        push(integer(static_cast<std::int32_t>(le(4))));
        return;
      case 'K':  // BININT1
        push(integer(static_cast<std::int64_t>(le(1))));
        return;
      case 'M':  // BININT2
        push(integer(static_cast<std::int64_t>(le(2))));
        return;
      case 0x8a: {  // LONG1: n little-endian two's-complement bytes
        const std::uint64_t n = le(1);
        if (n > 8) throw fail("an integer wider than 64 bits");
        std::uint64_t v = n == 0 ? 0 : le(static_cast<std::size_t>(n));
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
        push(integer(static_cast<std::int64_t>(v)));
        return;
      }
      case 'G': {  // BINFLOAT: big-endian double
        const auto b = take(8);
        std::uint64_t bits = 0;
        for (std::size_t i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<std::uint64_t>(b[i]);
        Value v;
        v.kind = Kind::Float;
        v.number = std::bit_cast<double>(bits);
        push(std::move(v));
        return;
      }
      case 'X':     // BINUNICODE
      case 0x8c:    // SHORT_BINUNICODE
      case 0x8d: {  // BINUNICODE8
        const std::uint64_t n = le(op == 'X' ? 4 : op == 0x8c ? 1 : 8);
        const auto b = take(n);
        push(string(std::string(reinterpret_cast<const char*>(b.data()), b.size())));
        return;
      }
      case 'c': {  // GLOBAL "module\nname\n"
        const std::string module = line();
        const std::string name = line();
        push(global(module, name));
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        const Value name = pop();
        const Value module = pop();
        push(global(as_string(module, "STACK_GLOBAL's module"), as_string(name, "STACK_GLOBAL's name")));
        return;
      }
      case 'q':  // BINPUT
      case 'r':  // LONG_BINPUT
        memo_[static_cast<std::uint32_t>(le(op == 'q' ? 1 : 4))] = top();
        return;
      case 0x94:  // MEMOIZE
        memo_[static_cast<std::uint32_t>(memo_.size())] = top();
        return;
      case 'h':    // BINGET
      case 'j': {  // LONG_BINGET
        const auto it = memo_.find(static_cast<std::uint32_t>(le(op == 'h' ? 1 : 4)));
        if (it == memo_.end()) throw fail("a memo reference to nothing");
        if (it->second.kind == Kind::List || it->second.kind == Kind::Dict) {
          // A state dict never refers back to a list or dict; allowing it would alias
          // mutable containers (and let a container hold itself).
          throw fail("a memo reference to a list or dict");
        }
        push(it->second);
        return;
      }
      case 'Q':  // BINPERSID
        push(persistent(pop()));
        return;
      case 'R': {  // REDUCE
        const Value args = pop();
        const Value callable = pop();
        push(reduce(callable, args));
        return;
      }
      case 'b': {  // BUILD: OrderedDict's state (state_dict()'s _metadata) is ignored
        (void)pop();
        if (top().kind != Kind::Dict) throw fail(fmt::format("BUILD on {}", kind_name(top().kind)));
        return;
      }
      default:
        throw fail(fmt::format("opcode 0x{:02x} ('{}') is not one a state dict needs", op,
                               op >= 0x20 && op < 0x7f ? static_cast<char>(op) : '?'));
    }
  }

  void set_items(Value& d, Items kv) {
    if (d.kind != Kind::Dict) throw fail("SETITEM(S) on " + std::string(kind_name(d.kind)));
    for (std::size_t i = 0; i < kv.size(); i += 2) {
      grow(d, kv[i]);
      grow(d, kv[i + 1]);
      d.dict->items.emplace_back(std::move(kv[i]), std::move(kv[i + 1]));
    }
  }

  std::vector<PickledTensor> state_dict(const Value& root) const {
    if (root.kind != Kind::Dict) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: the pickle holds {}, not a state dict", file_, kind_name(root.kind)));
    }
    std::vector<PickledTensor> out;
    for (const auto& [k, v] : root.dict->items) {
      if (k.kind != Kind::String)
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: a state dict key is {}", file_, kind_name(k.kind)));
      if (v.kind != Kind::Tensor) {
        throw Error(ErrorKind::CorruptFile, fmt::format("{}: state dict entry {} is {}, not a tensor", file_,
                                                        *k.text, kind_name(v.kind)));
      }
      PickledTensor t = *v.tensor;
      t.name = *k.text;
      out.push_back(std::move(t));
    }
    return out;
  }

  std::span<const std::byte> in_;
  std::string_view file_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;
  std::vector<Value> stack_;
  std::unordered_map<std::uint32_t, Value> memo_;
};

}  // namespace

std::vector<PickledTensor> read_state_dict_pickle(std::span<const std::byte> pickle,
                                                  std::string_view file_name) {
  return Unpickler(pickle, file_name).run();
}

}  // namespace warden::model::formats
