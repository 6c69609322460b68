#pragma once
/// The object type behind util::Json: members kept in insertion order (output lists fields in the
/// order they were written, as nlohmann::ordered_map does) with a hash index on the keys, so that
/// parsing an object of n members and looking each of them up costs O(n), not O(n^2) as with
/// nlohmann::ordered_map's linear search (issue 23: a config.json with 100k keys took 14-25 s).
/// Objects of up to kLinear members are searched linearly and carry no index; larger ones build
/// an open-addressing table of positions on the first look-up and extend it as members are added.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpuadvisor::util {

template <class Key, class T, class IgnoredLess = std::less<Key>,
          class Allocator = std::allocator<std::pair<const Key, T>>>
struct IndexedMap : std::vector<std::pair<const Key, T>, Allocator> {
  using key_type = Key;
  using mapped_type = T;
  using Container = std::vector<std::pair<const Key, T>, Allocator>;
  using iterator = typename Container::iterator;
  using const_iterator = typename Container::const_iterator;
  using size_type = typename Container::size_type;
  using value_type = typename Container::value_type;
  using key_compare = std::equal_to<>;

  static constexpr size_type kLinear = 16;

  IndexedMap() noexcept(noexcept(Container())) : Container{} {}
  explicit IndexedMap(const Allocator& alloc) noexcept(noexcept(Container(alloc))) : Container{alloc} {}
  template <class It>
  IndexedMap(It first, It last, const Allocator& alloc = Allocator()) : Container{first, last, alloc} {}
  IndexedMap(std::initializer_list<value_type> init, const Allocator& alloc = Allocator()) : Container{init, alloc} {}
  // A copy or a move starts without an index (rebuilt on the next look-up that needs one).
  IndexedMap(const IndexedMap& o) : Container(o) {}
  IndexedMap(IndexedMap&& o) noexcept : Container(std::move(o)) { o.forget(); }
  IndexedMap& operator=(const IndexedMap& o) {
    if (this != &o) {
      Container::operator=(o);
      forget();
    }
    return *this;
  }
  IndexedMap& operator=(IndexedMap&& o) noexcept {
    Container::operator=(std::move(o));
    forget();
    o.forget();
    return *this;
  }

  template <class K>
  std::pair<iterator, bool> emplace(K&& key, T&& t) {
    if (auto it = find(key); it != this->end()) return {it, false};
    Container::emplace_back(std::forward<K>(key), std::forward<T>(t));
    return {std::prev(this->end()), true};
  }

  template <class K>
  T& operator[](K&& key) {
    return emplace(std::forward<K>(key), T{}).first->second;
  }
  template <class K>
  const T& operator[](K&& key) const {
    return at(std::forward<K>(key));
  }

  template <class K>
  T& at(K&& key) {
    auto it = find(key);
    if (it == this->end()) throw std::out_of_range("key not found");
    return it->second;
  }
  template <class K>
  const T& at(K&& key) const {
    auto it = find(key);
    if (it == this->end()) throw std::out_of_range("key not found");
    return it->second;
  }

  template <class K, std::enable_if_t<!std::is_convertible_v<K, const_iterator>, int> = 0>
  size_type erase(K&& key) {
    auto it = find(key);
    if (it == this->end()) return 0;
    erase(it);
    return 1;
  }
  iterator erase(iterator pos) { return erase(pos, std::next(pos)); }
  iterator erase(iterator first, iterator last) {
    if (first == last) return first;
    const auto affected = std::distance(first, last);
    const auto offset = std::distance(Container::begin(), first);
    // The elements hold const keys: destroy and rebuild in place, as nlohmann::ordered_map does.
    for (auto it = first; std::next(it, affected) != Container::end(); ++it) {
      it->~value_type();
      new (&*it) value_type{std::move(*std::next(it, affected))};
    }
    Container::resize(this->size() - static_cast<size_type>(affected));
    forget();
    return Container::begin() + offset;
  }

  template <class K>
  size_type count(K&& key) const {
    return find(key) == this->end() ? 0 : 1;
  }

  template <class K>
  iterator find(K&& key) {
    const size_type i = locate(key);
    return i == npos ? this->end() : this->begin() + static_cast<std::ptrdiff_t>(i);
  }
  template <class K>
  const_iterator find(K&& key) const {
    const size_type i = locate(key);
    return i == npos ? this->end() : this->begin() + static_cast<std::ptrdiff_t>(i);
  }

  std::pair<iterator, bool> insert(value_type&& value) { return emplace(value.first, std::move(value.second)); }
  std::pair<iterator, bool> insert(const value_type& value) {
    if (auto it = find(value.first); it != this->end()) return {it, false};
    Container::push_back(value);
    return {std::prev(this->end()), true};
  }
  template <typename InputIt, typename = std::enable_if_t<std::is_convertible_v<
                                  typename std::iterator_traits<InputIt>::iterator_category, std::input_iterator_tag>>>
  void insert(InputIt first, InputIt last) {
    for (auto it = first; it != last; ++it) insert(*it);
  }

 private:
  static constexpr size_type npos = static_cast<size_type>(-1);
  // slots_[h] is a member's position + 1, or 0 for an empty slot; indexed_ members are in it.
  mutable std::vector<std::uint32_t> slots_;
  mutable size_type indexed_ = 0;

  const value_type& member(size_type i) const { return static_cast<const Container&>(*this)[i]; }
  void forget() const {
    slots_.clear();
    slots_.shrink_to_fit();
    indexed_ = 0;
  }
  static std::size_t hash_of(std::string_view k) { return std::hash<std::string_view>{}(k); }
  template <class K>
  static std::string_view view(const K& k) {
    return std::string_view(k);
  }
  void place(size_type pos) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t h = hash_of(view(member(pos).first)) & mask;
    while (slots_[h] != 0) h = (h + 1) & mask;
    slots_[h] = static_cast<std::uint32_t>(pos + 1);
  }
  // Brings the index up to date with the members: members are only ever appended between
  // look-ups (erase drops the index), so a shorter vector means a rebuild, a longer one an extension.
  void refresh() const {
    const size_type n = this->size();
    if (n < indexed_) forget();
    if (slots_.size() < 2 * n) {
      std::size_t cap = 64;
      while (cap < 2 * n) cap <<= 1;
      slots_.assign(cap, 0);
      indexed_ = 0;
    }
    for (; indexed_ < n; ++indexed_) place(indexed_);
  }
  template <class K>
  size_type locate(const K& key) const {
    const std::string_view k = view(key);
    const size_type n = this->size();
    if (n <= kLinear) {
      for (size_type i = 0; i < n; ++i)
        if (view(member(i).first) == k) return i;
      return npos;
    }
    refresh();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t h = hash_of(k) & mask; slots_[h] != 0; h = (h + 1) & mask) {
      const size_type i = slots_[h] - 1;
      if (view(member(i).first) == k) return i;
    }
    return npos;
  }
};

}  // namespace gpuadvisor::util
